// Prints a PDF's text the way pdf.js (Firefox's viewer: its find bar and text layer) reads it:
// each page's getTextContent() items' `str` joined, with "\n" after an item whose hasEOL is
// true; pages separated by a form feed. A test tool only. Usage: node read.mjs FILE.pdf [PAGES]
import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { dirname } from "node:path";

// pdf.js warns through console.log: keep stdout for the text alone, and drop the canvas
// polyfill notices (text extraction draws nothing).
const toStderr = (...args) => {
  const line = args.join(" ");
  if (!line.includes("Cannot polyfill")) process.stderr.write(line + "\n");
};
console.log = console.info = console.warn = toStderr;
const pdfjs = await import("pdfjs-dist/legacy/build/pdf.mjs");
const dist = dirname(createRequire(import.meta.url).resolve("pdfjs-dist/package.json"));

const [file, limit] = process.argv.slice(2);
const doc = await pdfjs.getDocument({
  data: new Uint8Array(await readFile(file)),
  cMapUrl: `${dist}/cmaps/`,
  cMapPacked: true,
  standardFontDataUrl: `${dist}/standard_fonts/`,
  verbosity: pdfjs.VerbosityLevel.ERRORS,
}).promise;
const count = limit ? Math.min(Number(limit), doc.numPages) : doc.numPages;
const pages = [];
for (let n = 1; n <= count; n++) {
  const content = await (await doc.getPage(n)).getTextContent();
  pages.push(content.items.map((item) => item.str + (item.hasEOL ? "\n" : "")).join(""));
}
process.stdout.write(pages.join("\f"));
await doc.destroy();
