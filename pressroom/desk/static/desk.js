// The reviewer's desk: pages one at a time, boxes placed over the source page, boxes toggled
// or drawn, the counts of what will be burned kept current, and the whole set of corrections
// written into the Apply form when it is sent.
// Boxes are in PDF points (top-left origin of the upright page); nothing here ever sees text.
// One finding may have several boxes (one per line of its words): they share data-finding and
// are pressed together.
(function () {
  "use strict";

  var pagesEl = document.getElementById("pages");
  if (!pagesEl) {
    return;
  }
  var all = function (root, selector) {
    return Array.prototype.slice.call(root.querySelectorAll(selector));
  };
  var pages = all(pagesEl, "section.page");
  var editable = pagesEl.getAttribute("data-editable") === "1";
  var counter = document.getElementById("counter");
  var prev = document.getElementById("prev");
  var next = document.getElementById("next");
  var everyNext = document.getElementById("every-next");
  var viewport = document.getElementById("viewport");
  var rails = all(document, ".rail .findings");
  var thumbs = all(document, ".thumbs .thumb");
  var current = 0;
  var FIT_WIDTH = 0;
  var FIT_PAGE = -1;
  // FIT_WIDTH, FIT_PAGE, or a factor of the page's actual size (1 pt = 4/3 px)
  var zoom = FIT_WIDTH;
  var LEVELS = [0.25, 0.33, 0.5, 0.67, 0.75, 1, 1.25, 1.5, 2, 3, 4];
  var PAD = 8; // the viewport's padding, px (desk.css)
  var GAP = 12; // between the two pages side by side, px (desk.css)
  var output = false; // which copy the page shows: the source or the redacted output
  var sideBySide = false;

  function numbers(text) {
    return String(text || "").trim().split(/\s+/).map(Number);
  }

  function pageSize(el) {
    return [
      parseFloat(el.getAttribute("data-width-pt")),
      parseFloat(el.getAttribute("data-height-pt"))
    ];
  }

  function sheetOf(i) {
    return pages[i] ? pages[i].querySelector(".sheet:not(.twin)") : null;
  }

  function boxesOf(finding) {
    return all(pagesEl, '.box[data-finding="' + finding + '"]');
  }

  function entriesOf(finding) {
    return all(document, '.rail .finding[data-finding="' + finding + '"]');
  }

  // --- placing: positions in % of the upright page (the picture may be drawn at any size),
  // grown by a few px (--grow, desk.css: its edge's width and a clear pixel) so the edge lies
  // outside the words ---
  function place(el, sheet) {
    var size = pageSize(sheet);
    var b = numbers(el.getAttribute("data-box"));
    var x = 100 * b[0] / size[0];
    var w = 100 * (b[2] - b[0]) / size[0];
    el.style.left = "calc(" + x + "% - var(--grow))";
    el.style.top = "calc(" + (100 * b[1] / size[1]) + "% - var(--grow))";
    el.style.width = "calc(" + w + "% + 2 * var(--grow))";
    el.style.height = "calc(" + (100 * (b[3] - b[1]) / size[1]) + "% + 2 * var(--grow))";
    // the "kept" tag sits in the page's left margin, level with the box (desk.css)
    el.style.setProperty("--tx", w > 0 ? String(-x / w) : "0");
  }

  // a box's share of the page's width left of it: where its "kept" tag would go
  function marginOf(el, sheet) {
    var b = numbers(el.getAttribute("data-box"));
    return b[0] / pageSize(sheet)[0];
  }

  // --- a group of overlapping findings: the outermost drawn as any box, the others as a
  // thin edge inside it (not four outlines on one block of words) ---
  var groups = {};
  all(pagesEl, "button.box[data-group]").forEach(function (btn) {
    var g = btn.getAttribute("data-group");
    if (g) {
      (groups[g] = groups[g] || []).push(btn);
    }
  });

  function areaOf(btn) {
    var b = numbers(btn.getAttribute("data-removes") || btn.getAttribute("data-box"));
    return (b[2] - b[0]) * (b[3] - b[1]);
  }

  var outerOf = {};
  Object.keys(groups).forEach(function (g) {
    var outer = null;
    groups[g].forEach(function (btn) {
      if (outer === null || areaOf(btn) > areaOf(outer)) {
        outer = btn;
      }
    });
    outerOf[g] = outer.getAttribute("data-finding");
    groups[g].forEach(function (btn) {
      btn.classList.toggle("inner", btn.getAttribute("data-finding") !== outerOf[g]);
    });
  });

  function stateOf(btn) {
    return btn.getAttribute("data-state") || "burned";
  }

  function burning(state) {
    return state === "burned" || state === "doubt";
  }

  // inner members show a fill of their own only where the outer one is not burned
  function refreshGroups() {
    Object.keys(groups).forEach(function (g) {
      var outer = boxesOf(outerOf[g]);
      var outerBurns = outer.length > 0 && burning(stateOf(outer[0]));
      groups[g].forEach(function (btn) {
        btn.classList.toggle("alone", !outerBurns);
      });
    });
  }

  // --- counts of what will be burned: header, each page's rail heading, thumbnails ---
  function counted() {
    var seen = {};
    var byKind = {};
    var byPage = {};
    all(pagesEl, "button.box[data-finding]").forEach(function (btn) {
      var f = btn.getAttribute("data-finding");
      if (seen[f] || btn.getAttribute("data-counted") === "0" || !burning(stateOf(btn))) {
        return;
      }
      seen[f] = true;
      var kind = btn.getAttribute("data-kind");
      var page = btn.getAttribute("data-page");
      byKind[kind] = (byKind[kind] || 0) + 1;
      byPage[page] = (byPage[page] || 0) + 1;
    });
    return { byKind: byKind, byPage: byPage };
  }

  function kindClass(kind) {
    return "k-" + (String(kind).toLowerCase().replace(/[^a-z0-9-]/g, "-").slice(0, 40) || "x");
  }

  function refreshCounts() {
    var c = counted();
    var head = document.querySelector('[data-testid="counts"]');
    if (head) {
      var shown = {};
      all(head, "[data-count-kind]").forEach(function (el) {
        shown[el.getAttribute("data-count-kind")] = el;
      });
      Object.keys(c.byKind).sort().forEach(function (kind) {
        if (!shown[kind]) {
          var el = document.createElement("span");
          el.className = "count-kind";
          el.setAttribute("data-count-kind", kind);
          var k = document.createElement("span");
          k.className = "k " + kindClass(kind);
          k.textContent = kind;
          el.appendChild(k);
          el.appendChild(document.createTextNode(" "));
          el.appendChild(document.createElement("b"));
          var none = head.querySelector(".count-none");
          head.insertBefore(el, none);
          head.insertBefore(document.createTextNode(" "), el);
          shown[kind] = el;
        }
      });
      var total = 0;
      Object.keys(shown).forEach(function (kind) {
        var n = c.byKind[kind] || 0;
        total += n;
        shown[kind].querySelector("b").textContent = String(n);
        shown[kind].classList.toggle("zero", n === 0);
      });
      var none = head.querySelector(".count-none");
      if (none) {
        none.hidden = total > 0;
      }
    }
    pages.forEach(function (p) {
      var n = p.getAttribute("data-page");
      var k = c.byPage[n] || 0;
      var rail = document.querySelector('[data-testid="page-count-' + n + '"]');
      if (rail) {
        rail.textContent = String(k);
      }
      var thumb = document.querySelector('[data-testid="thumb-count-' + n + '"]');
      if (thumb) {
        thumb.textContent = String(k);
        thumb.classList.toggle("zero", k === 0);
      }
      var t = document.querySelector('[data-testid="thumb-' + n + '"]');
      if (t) {
        t.setAttribute("aria-label", "page " + n + ", " + k + " to burn");
      }
    });
    refreshGroups();
  }

  // --- pressing: every box of a finding and its rail entry change together ---
  function shownState(state) {
    return state === "kept" ? "kept" : state === "doubt" ? "doubt, burned" : "burned";
  }

  function setRemoved(finding, removed) {
    boxesOf(finding).forEach(function (btn) {
      var state = removed ? "kept" : btn.classList.contains("doubt") ? "doubt" : "burned";
      btn.classList.toggle("removed", removed);
      btn.setAttribute("data-state", state);
      btn.setAttribute("aria-pressed", removed ? "true" : "false");
      var ident = btn.getAttribute("data-ident");
      btn.setAttribute(
        "aria-label",
        removed
          ? ident + ": removed, the text stays; press to redact it again"
          : ident + ": press to remove; the text stays"
      );
    });
    var first = boxesOf(finding)[0];
    var state = first ? stateOf(first) : "kept";
    entriesOf(finding).forEach(function (entry) {
      ["st-burned", "st-kept", "st-doubt"].forEach(function (c) {
        entry.classList.toggle(c, c === "st-" + state);
      });
      var label = entry.querySelector(".fstate");
      if (label) {
        label.textContent = shownState(state);
      }
    });
    refreshCounts();
  }

  function removeDrawn(finding) {
    boxesOf(finding).forEach(function (btn) {
      btn.parentNode.removeChild(btn);
    });
    entriesOf(finding).forEach(function (entry) {
      var li = entry.parentNode;
      if (li && li.parentNode) {
        li.parentNode.removeChild(li);
      }
    });
    refreshCounts();
  }

  // what pressing a finding does: a drawn box goes; any other is kept or redacted again
  function toggle(finding) {
    var boxes = boxesOf(finding);
    if (!boxes.length || boxes[0].disabled || boxes[0].tagName !== "BUTTON") {
      return;
    }
    if (boxes[0].getAttribute("data-origin") === "drawn") {
      removeDrawn(finding);
      return;
    }
    setRemoved(finding, !boxes[0].classList.contains("removed"));
  }

  function onBox(event) {
    var btn = event.currentTarget;
    if (!btn.disabled) {
      toggle(btn.getAttribute("data-finding"));
    }
  }

  function sheets() {
    return all(pagesEl, ".sheet[data-width-pt]");
  }

  sheets().forEach(function (sheet) {
    all(sheet, "button.box").forEach(function (btn) {
      place(btn, sheet);
      btn.addEventListener("click", onBox);
    });
    // what the check found again: placed like the boxes, never pressed (no correction)
    all(sheet, ".box.again").forEach(function (mark) {
      place(mark, sheet);
    });
  });

  // --- the rail: a crop of the page picture where each finding's words stand ---
  function pictureUrl(base, cssWidth) {
    var ratio = window.devicePixelRatio || 1;
    // in steps of 250 px: zooming back and forth asks for pictures the desk made already
    var px = Math.min(4000, Math.max(250, Math.ceil(cssWidth * ratio / 250) * 250));
    return base + (base.indexOf("?") < 0 ? "?" : "&") + "w=" + px;
  }

  var CROP_H = 34; // the tallest a crop is drawn, px
  var CROP_PAD = 3; // points of page around the words
  var CROP_STACK = 64; // the tallest a crop of lines one under another is drawn, px

  // where an entry's words stand: one rectangle per line (the boxes of its finding), or its
  // data-crop (a place found again, or a finding with no box drawn)
  function cropLines(entry, size) {
    var finding = entry.getAttribute("data-finding");
    var lines = entry.classList.contains("again") ? [] : boxesOf(finding).map(function (b) {
      return numbers(b.getAttribute("data-box"));
    });
    if (!lines.length) {
      lines = [numbers(entry.getAttribute("data-crop"))];
    }
    return lines.map(function (b) {
      return [
        Math.max(0, b[0] - CROP_PAD),
        Math.max(0, b[1] - CROP_PAD),
        Math.min(size[0], b[2] + CROP_PAD),
        Math.min(size[1], b[3] + CROP_PAD)
      ];
    }).filter(function (b) { return b[2] > b[0] && b[3] > b[1]; });
  }

  function drawCrops(rail) {
    var size = pageSize(rail);
    var source = rail.getAttribute("data-source");
    if (!size[0] || !size[1] || !source) {
      return;
    }
    var plans = [];
    var widest = 0;
    all(rail, ".finding[data-crop]").forEach(function (entry) {
      var crop = entry.querySelector(".crop");
      var room = entry.clientWidth - 12;
      if (!crop || room <= 0) {
        return;
      }
      var lines = cropLines(entry, size);
      if (!lines.length) {
        return;
      }
      // a finding over two lines: its lines one after the other, as they read; stacked where
      // side by side would draw them too small to read
      var across = 0;
      var wide = 0;
      var tall = 0;
      lines.forEach(function (b) {
        across += b[2] - b[0];
        wide = Math.max(wide, b[2] - b[0]);
        tall = Math.max(tall, b[3] - b[1]);
      });
      var gaps = 4 * (lines.length - 1);
      var s = Math.min((room - gaps) / across, CROP_H / tall, 2.5); // px per point
      var stacked = Math.min(room / wide, CROP_H / tall, 2.5,
        (CROP_STACK - 2 * (lines.length - 1)) / (lines.length * tall));
      var stack = lines.length > 1 && s < 0.75 * stacked;
      crop.classList.toggle("stack", stack);
      s = stack ? stacked : s;
      widest = Math.max(widest, size[0] * s);
      plans.push([crop, lines, s]);
    });
    if (!plans.length) {
      return;
    }
    // one picture for the page's crops, sharp enough for the largest: the page's own picture
    // where it is the source at two thirds of that or more (a crop drawn a little larger than
    // its pixels still reads), else one of its own
    var url = pictureUrl(source, Math.min(widest, 1500));
    var sheet = sheetOf(pageOf(rail));
    var shown = sheet ? sheet.querySelector("img.pic").getAttribute("src") || "" : "";
    var w = /[?&]w=(\d+)/.exec(shown);
    if (shown.indexOf(source + "?") === 0 && w &&
        parseInt(w[1], 10) >= Math.min(widest, 1500) * (window.devicePixelRatio || 1) * 2 / 3) {
      url = shown;
    }
    plans.forEach(function (p) {
      var crop = p[0];
      var s = p[2];
      while (crop.firstChild) {
        crop.removeChild(crop.firstChild);
      }
      p[1].forEach(function (b) {
        var part = document.createElement("span");
        part.className = "part";
        part.style.width = ((b[2] - b[0]) * s) + "px";
        part.style.height = ((b[3] - b[1]) * s) + "px";
        part.style.backgroundImage = 'url("' + url + '")';
        part.style.backgroundSize = (size[0] * s) + "px " + (size[1] * s) + "px";
        part.style.backgroundPosition = (-b[0] * s) + "px " + (-b[1] * s) + "px";
        crop.appendChild(part);
      });
    });
  }

  // --- finding a finding: its page shown, its box scrolled into view and flashed ---
  var flashing = [];
  var flashEnd = null;

  function unflash() {
    flashing.forEach(function (box) { box.classList.remove("flash"); });
    flashing = [];
  }

  function flash(finding) {
    unflash();
    flashing = boxesOf(finding).concat(all(pagesEl, '.box.again[data-finding="' + finding + '"]'));
    flashing.forEach(function (box) {
      void box.offsetWidth; // the animation starts again
      box.classList.add("flash");
    });
    if (flashEnd) {
      clearTimeout(flashEnd);
    }
    flashEnd = setTimeout(unflash, 1500); // the animation's length (desk.css), and a little
  }

  function pageOf(el) {
    return parseInt(el.getAttribute("data-page"), 10) - 1;
  }

  function locate(entry) {
    var finding = entry.getAttribute("data-finding");
    var i = pageOf(entry);
    if (i !== current) {
      show(i);
    }
    var box = document.querySelector('[data-testid="' + entry.getAttribute("data-for") + '"]');
    if (box) {
      box.scrollIntoView({ block: "center", inline: "center" });
    }
    if (finding) {
      flash(finding);
    }
  }

  function light(entry, onOff) {
    var finding = entry.getAttribute("data-finding");
    entry.classList.toggle("lit", onOff);
    boxesOf(finding).concat(all(pagesEl, '.box.again[data-finding="' + finding + '"]'))
      .forEach(function (box) { box.classList.toggle("lit", onOff); });
  }

  // a click on an entry finds its box; Space or Enter on it (a click with no pointer) toggles
  function wireEntry(entry) {
    entry.addEventListener("click", function (event) {
      if (event.detail === 0) {
        toggle(entry.getAttribute("data-finding"));
        flash(entry.getAttribute("data-finding"));
      } else {
        locate(entry);
      }
    });
    entry.addEventListener("mouseenter", function () { light(entry, true); });
    entry.addEventListener("mouseleave", function () { light(entry, false); });
    entry.addEventListener("focus", function () { light(entry, true); });
    entry.addEventListener("blur", function () { light(entry, false); });
  }

  all(document, ".rail .finding").forEach(wireEntry);
  all(pagesEl, "button.box").forEach(function (btn) {
    var on = function () {
      entriesOf(btn.getAttribute("data-finding")).forEach(function (e) { light(e, true); });
    };
    var off = function () {
      entriesOf(btn.getAttribute("data-finding")).forEach(function (e) { light(e, false); });
    };
    btn.addEventListener("mouseenter", on);
    btn.addEventListener("mouseleave", off);
    btn.addEventListener("focus", on);
    btn.addEventListener("blur", off);
  });

  // --- drawing a box: drag on the source image ---
  var drawn = 0;

  function makeBox(sheet, box) {
    var page = sheet.getAttribute("data-page");
    var every = everyNext !== null && everyNext.checked;
    var kind = every ? "every" : "manual";
    drawn += 1;
    var finding = "d" + page + "-" + drawn;
    var what = every ? "every-occurrence area" : "manual box";
    var ident = "drawn " + what + " " + drawn + " on page " + page;
    var points = box.map(function (v) { return v.toFixed(2); }).join(" ");
    var btn = document.createElement("button");
    btn.type = "button";
    btn.className = "box " + kindClass(kind);
    btn.setAttribute("data-kind", kind);
    btn.setAttribute("data-origin", "drawn");
    btn.setAttribute("data-page", page);
    btn.setAttribute("data-box", points);
    btn.setAttribute("data-removes", points);
    btn.setAttribute("data-finding", finding);
    btn.setAttribute("data-state", "burned");
    btn.setAttribute("data-group", "");
    btn.setAttribute("data-counted", "1");
    btn.setAttribute("data-line", "1");
    btn.setAttribute("data-ident", ident);
    btn.setAttribute("data-testid", "drawn-" + page + "-" + drawn);
    btn.setAttribute("aria-label", ident + ": press to remove this box");
    btn.addEventListener("click", onBox);
    sheet.appendChild(btn);
    place(btn, sheet);
    var rail = document.querySelector('.rail .findings[data-page="' + page + '"]');
    if (rail) {
      var list = rail.querySelector("ol.entries:not(.again-list)");
      if (!list) {
        list = document.createElement("ol");
        list.className = "entries";
        var nothing = rail.querySelector(".nothing");
        rail.insertBefore(list, nothing ? nothing.nextSibling : rail.querySelector(".again-head"));
        if (nothing) {
          nothing.hidden = true;
        }
      }
      var li = document.createElement("li");
      li.className = "entry";
      var entry = document.createElement("button");
      entry.type = "button";
      entry.className = "finding st-burned";
      entry.setAttribute("data-for", "drawn-" + page + "-" + drawn);
      entry.setAttribute("data-finding", finding);
      entry.setAttribute("data-page", page);
      entry.setAttribute("data-crop", points);
      entry.setAttribute("data-testid", "finding-drawn-" + page + "-" + drawn);
      var crop = document.createElement("span");
      crop.className = "crop";
      crop.setAttribute("aria-hidden", "true");
      var meta = document.createElement("span");
      meta.className = "meta";
      var k = document.createElement("span");
      k.className = "k " + kindClass(kind);
      k.textContent = kind;
      meta.appendChild(k);
      meta.appendChild(document.createTextNode(" drawn · page " + page + " · "));
      var state = document.createElement("span");
      state.className = "fstate";
      state.textContent = "burned";
      meta.appendChild(state);
      entry.appendChild(crop);
      entry.appendChild(meta);
      li.appendChild(entry);
      list.appendChild(li);
      wireEntry(entry);
      drawCrops(rail);
    }
    btn.addEventListener("mouseenter", function () { light(entry, true); });
    btn.addEventListener("mouseleave", function () { light(entry, false); });
    if (everyNext) {
      everyNext.checked = false; // "the next box I draw": one box
    }
    refreshCounts();
  }

  if (editable) {
    sheets().forEach(function (sheet) {
      var img = sheet.querySelector("img");
      var start = null;
      var preview = null;

      function at(event) {
        var r = img.getBoundingClientRect();
        return [
          Math.min(Math.max(event.clientX - r.left, 0), r.width),
          Math.min(Math.max(event.clientY - r.top, 0), r.height)
        ];
      }

      img.addEventListener("pointerdown", function (event) {
        if (event.button !== 0 || panning) {
          return;
        }
        event.preventDefault();
        start = at(event);
        preview = document.createElement("div");
        preview.className = "drawing";
        sheet.appendChild(preview);
        img.setPointerCapture(event.pointerId);
      });

      img.addEventListener("pointermove", function (event) {
        if (!start || !preview) {
          return;
        }
        var p = at(event);
        preview.style.left = Math.min(start[0], p[0]) + "px";
        preview.style.top = Math.min(start[1], p[1]) + "px";
        preview.style.width = Math.abs(p[0] - start[0]) + "px";
        preview.style.height = Math.abs(p[1] - start[1]) + "px";
      });

      function finish(event) {
        if (!start) {
          return;
        }
        var p = at(event);
        var r = img.getBoundingClientRect();
        var s = start;
        start = null;
        if (preview) {
          sheet.removeChild(preview);
          preview = null;
        }
        if (Math.abs(p[0] - s[0]) < 4 || Math.abs(p[1] - s[1]) < 4 || !r.width || !r.height) {
          return; // a click, not a box
        }
        var size = pageSize(sheet);
        var kx = size[0] / r.width;
        var ky = size[1] / r.height;
        makeBox(sheet, [
          Math.min(s[0], p[0]) * kx,
          Math.min(s[1], p[1]) * ky,
          Math.max(s[0], p[0]) * kx,
          Math.max(s[1], p[1]) * ky
        ]);
      }

      img.addEventListener("pointerup", finish);
      img.addEventListener("pointercancel", function () {
        start = null;
        if (preview) {
          sheet.removeChild(preview);
          preview = null;
        }
      });
    });
  }

  // --- the whole set of corrections, written into the Apply form as it is sent: one removed
  // entry per finding (its whole box), one entry per drawn or applied area still standing ---
  function area(btn, attr) {
    return {
      page: parseInt(btn.getAttribute("data-page"), 10),
      box: numbers(btn.getAttribute(attr) || btn.getAttribute("data-box"))
    };
  }

  function corrections() {
    var out = { removed: [], manual: [], every: [] };
    var seen = {};
    all(pagesEl, "button.box").forEach(function (btn) {
      var finding = btn.getAttribute("data-finding") || btn.getAttribute("data-testid");
      if (seen[finding]) {
        return;
      }
      seen[finding] = true;
      var kind = btn.getAttribute("data-kind");
      var origin = btn.getAttribute("data-origin");
      var removed = btn.classList.contains("removed");
      if ((kind === "manual" || kind === "every") && origin !== "finding") {
        if (!removed) {
          out[kind].push(area(btn, "data-removes"));
        }
      } else if (removed) {
        out.removed.push(area(btn, "data-removes"));
      }
    });
    return out;
  }

  var applyForm = document.getElementById("apply-form");
  var field = document.getElementById("corrections");
  if (applyForm && field && editable) {
    applyForm.addEventListener("submit", function () {
      field.value = JSON.stringify(corrections());
    });
  }

  // --- changes not applied yet: the approve step says so before anything is published ---
  function keys(set) {
    var out = [];
    ["removed", "manual", "every"].forEach(function (kind) {
      set[kind].forEach(function (a) {
        out.push(kind + ":" + a.page + ":" + a.box.map(function (v) {
          return Number(v).toFixed(1);
        }).join(","));
      });
    });
    return out;
  }
  var initial = editable ? keys(corrections()) : [];
  var pendingField = document.getElementById("pending");
  var approveForm = document.getElementById("approve-form");
  if (approveForm && pendingField && editable) {
    approveForm.addEventListener("submit", function () {
      var now = keys(corrections());
      var changed = now.filter(function (k) { return initial.indexOf(k) < 0; }).length +
        initial.filter(function (k) { return now.indexOf(k) < 0; }).length;
      pendingField.value = String(changed);
    });
  }

  // --- pages ---
  function show(i) {
    if (i < 0 || i >= pages.length) {
      return;
    }
    current = i;
    pages.forEach(function (p, j) {
      p.hidden = j !== i;
    });
    rails.forEach(function (r, j) {
      r.hidden = j !== i;
    });
    thumbs.forEach(function (t, j) {
      t.classList.toggle("current", j === i);
      if (j === i) {
        t.setAttribute("aria-current", "page");
      } else {
        t.removeAttribute("aria-current");
      }
    });
    layout();
    if (rails[i]) {
      drawCrops(rails[i]);
    }
    if (thumbs[i] && thumbs[i].scrollIntoView) {
      thumbs[i].scrollIntoView({ block: "nearest" });
    }
    if (counter) {
      counter.textContent = "page " + (i + 1) + " of " + pages.length;
    }
    if (prev) {
      prev.disabled = i === 0;
    }
    if (next) {
      next.disabled = i === pages.length - 1;
    }
  }

  // --- j / k: the next or previous finding, across pages ---
  function entries() {
    return all(document, ".rail .finding[data-finding]");
  }

  function moveFinding(direction) {
    var list = entries();
    if (!list.length) {
      return;
    }
    var active = document.activeElement;
    var at = list.indexOf(active);
    if (at < 0 && active && active.classList && active.classList.contains("box")) {
      // from a box on the page: its finding's entry
      at = list.indexOf(entriesOf(active.getAttribute("data-finding"))[0]);
    }
    var target;
    if (at < 0) {
      var here = list.filter(function (e) { return pageOf(e) === current; });
      var from = direction > 0 ? list.filter(function (e) { return pageOf(e) > current; })[0]
        : list.filter(function (e) { return pageOf(e) < current; }).pop();
      target = here.length ? (direction > 0 ? here[0] : here[here.length - 1]) : from;
    } else {
      target = list[at + direction];
    }
    if (!target) {
      return;
    }
    if (pageOf(target) !== current) {
      show(pageOf(target));
    }
    target.focus({ preventScroll: false });
    locate(target);
  }

  // --- keys: n / → next page, p / ← previous, j / k findings, + / − zoom, 0 fit width,
  // f fit page, o output, Shift+A approve ---
  document.addEventListener("keydown", function (event) {
    if (event.ctrlKey || event.metaKey || event.altKey) {
      return;
    }
    var t = event.target;
    var tag = t && t.tagName ? t.tagName.toLowerCase() : "";
    var typing = tag === "textarea" || tag === "select" ||
      (tag === "input" && ["checkbox", "radio", "button", "submit"].indexOf(t.type) < 0);
    if (typing) {
      return; // letters typed into a field are the field's
    }
    var key = event.key;
    if (key === "n" || key === "ArrowRight") {
      show(current + 1);
    } else if (key === "p" || key === "ArrowLeft") {
      show(current - 1);
    } else if (key === "j") {
      moveFinding(1);
    } else if (key === "k") {
      moveFinding(-1);
    } else if (key === "+" || key === "=") {
      step(1);
    } else if (key === "-" || key === "_") {
      step(-1);
    } else if (key === "0") {
      setZoom(FIT_WIDTH);
    } else if (key === "f" || key === "9") {
      setZoom(FIT_PAGE);
    } else if (key === "o") {
      setOutput(!output);
    } else if ((key === "A" || key === "a") && event.shiftKey && approveForm) {
      if (approveForm.requestSubmit) {
        approveForm.requestSubmit();
      } else {
        approveForm.submit();
      }
    } else {
      return;
    }
    event.preventDefault();
  });

  if (prev) {
    prev.addEventListener("click", function () { show(current - 1); });
  }
  if (next) {
    next.addEventListener("click", function () { show(current + 1); });
  }

  // --- size, zoom, pan, which copy: the picture is asked for at the size it is drawn ---
  function room() {
    if (!viewport) {
      return [900, 700];
    }
    return [viewport.clientWidth - 2 * PAD, viewport.clientHeight - 2 * PAD];
  }

  // how wide a page is drawn: at fit, each of two pages side by side takes half
  function drawnWidth(sheet) {
    var size = pageSize(sheet);
    var r = room();
    var across = sideBySide ? (r[0] - GAP) / 2 : r[0];
    if (zoom === FIT_WIDTH || !size[0]) {
      return Math.max(120, Math.floor(across));
    }
    if (zoom === FIT_PAGE) {
      return Math.max(60, Math.floor(Math.min(across, r[1] * size[0] / size[1])));
    }
    return size[0] * 4 / 3 * zoom;
  }

  function setSrc(img, url) {
    if (img.getAttribute("src") !== url) {
      img.setAttribute("src", url);
    }
  }

  function layout() {
    var page = pages[current];
    if (!page) {
      return;
    }
    var sheet = sheetOf(current);
    var twin = page.querySelector(".sheet.twin");
    var size = pageSize(sheet);
    var width = drawnWidth(sheet);
    // two pages side by side whenever both fit across at the chosen zoom (at fit they do)
    var fitsBoth = zoom <= 0 || (2 * width + GAP <= room()[0] + 1);
    var sideToggle = document.getElementById("side-by-side");
    if (sideToggle) {
      sideToggle.disabled = !fitsBoth && !sideBySide;
      sideToggle.checked = sideBySide;
    }
    [sheet, twin].forEach(function (s) {
      if (s) {
        s.style.width = width + "px";
        if (size[0] && size[1]) {
          s.style.aspectRatio = size[0] + " / " + size[1]; // its place before the picture comes
        }
      }
    });
    sheet.classList.toggle("small", width < 320);
    // under 1 px per point the space between two words is 2 or 3 px: thin edges, drawn closer
    sheet.classList.toggle("tight", size[0] > 0 && width / size[0] < 1);
    if (size[0]) {
      all(sheet, "button.box").forEach(function (btn) {
        // a "kept" tag only where the page's margin has room for it
        btn.classList.toggle("notag", marginOf(btn, sheet) * width < 34);
      });
    }
    var img = sheet.querySelector("img.pic");
    setSrc(img, pictureUrl(output ? sheet.getAttribute("data-output") :
      sheet.getAttribute("data-source"), width));
    sheet.classList.toggle("showing-output", output);
    if (twin) {
      twin.hidden = !sideBySide;
      if (sideBySide) {
        setSrc(twin.querySelector("img.pic"), pictureUrl(sheet.getAttribute("data-output"), width));
      }
    }
    var level = document.getElementById("zoom-level");
    if (level) {
      level.textContent = zoom === FIT_WIDTH ? "fit" : zoom === FIT_PAGE ? "fit page" :
        Math.round(zoom * 100) + " %";
      if (size[0]) {
        level.title = Math.round(100 * width / (size[0] * 4 / 3)) + " % of the page's size";
      }
    }
    var fit = document.getElementById("zoom-fit");
    if (fit) {
      fit.setAttribute("aria-pressed", zoom === FIT_WIDTH ? "true" : "false");
    }
    var whole = document.getElementById("fit-page");
    if (whole) {
      whole.setAttribute("aria-pressed", zoom === FIT_PAGE ? "true" : "false");
    }
  }

  function setZoom(z) {
    var before = viewport ? [viewport.scrollLeft, viewport.scrollTop, viewport.scrollWidth,
      viewport.scrollHeight] : null;
    zoom = z;
    layout();
    if (viewport && before && before[2] && before[3]) {
      // keep the same part of the page in view
      viewport.scrollLeft = before[0] * viewport.scrollWidth / before[2];
      viewport.scrollTop = before[1] * viewport.scrollHeight / before[3];
    }
  }

  function step(direction) {
    var sheet = sheetOf(current);
    var size = sheet ? pageSize(sheet) : [0];
    var now = zoom <= 0 && size[0] ? drawnWidth(sheet) / (size[0] * 4 / 3) : zoom;
    var to = null;
    if (direction > 0) {
      to = LEVELS.filter(function (l) { return l > now + 0.01; })[0];
    } else {
      to = LEVELS.filter(function (l) { return l < now - 0.01; }).pop();
    }
    if (to === undefined || to === null) {
      to = direction > 0 ? LEVELS[LEVELS.length - 1] : LEVELS[0];
    }
    setZoom(to);
  }

  function setOutput(on) {
    output = on;
    var src = document.getElementById("show-source");
    var out = document.getElementById("show-output");
    if (src) {
      src.setAttribute("aria-pressed", on ? "false" : "true");
    }
    if (out) {
      out.setAttribute("aria-pressed", on ? "true" : "false");
    }
    layout();
  }

  function on(id, fn) {
    var el = document.getElementById(id);
    if (el) {
      el.addEventListener("click", fn);
    }
  }
  on("zoom-fit", function () { setZoom(FIT_WIDTH); });
  on("fit-page", function () { setZoom(FIT_PAGE); });
  on("zoom-in", function () { step(1); });
  on("zoom-out", function () { step(-1); });
  on("show-source", function () { setOutput(false); });
  on("show-output", function () { setOutput(true); });
  var side = document.getElementById("side-by-side");
  if (side) {
    side.addEventListener("change", function () {
      sideBySide = side.checked;
      layout();
    });
  }
  var resized = null;
  window.addEventListener("resize", function () {
    layout();
    if (resized) {
      clearTimeout(resized);
    }
    resized = setTimeout(function () {
      if (rails[current]) {
        drawCrops(rails[current]);
      }
    }, 150);
  });

  // pan: hold Space and drag (or scroll); Space on a focused control presses it instead
  var panning = false;
  var panFrom = null;
  document.addEventListener("keydown", function (event) {
    if (event.key === " " && event.target === document.body) {
      panning = true;
      if (viewport) {
        viewport.classList.add("panning");
      }
      event.preventDefault();
    }
  });
  document.addEventListener("keyup", function (event) {
    if (event.key === " ") {
      panning = false;
      panFrom = null;
      if (viewport) {
        viewport.classList.remove("panning");
      }
    }
  });
  if (viewport) {
    viewport.addEventListener("pointerdown", function (event) {
      if (panning) {
        panFrom = [event.clientX, event.clientY, viewport.scrollLeft, viewport.scrollTop];
        event.preventDefault();
      }
    }, true);
    viewport.addEventListener("pointermove", function (event) {
      if (panning && panFrom) {
        viewport.scrollLeft = panFrom[2] - (event.clientX - panFrom[0]);
        viewport.scrollTop = panFrom[3] - (event.clientY - panFrom[1]);
      }
    });
    viewport.addEventListener("pointerup", function () { panFrom = null; });
  }

  // thumbnails jump to their page
  thumbs.forEach(function (t) {
    t.addEventListener("click", function () {
      show(parseInt(t.getAttribute("data-goto"), 10) - 1);
    });
  });

  refreshCounts();
  show(0);
})();
