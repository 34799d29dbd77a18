// The reviewer's desk: pages one at a time, boxes placed over the source page, boxes toggled
// or drawn, and the whole set of corrections written into the Apply form when it is sent.
// Boxes are in PDF points (top-left origin of the upright page); nothing here ever sees text.
(function () {
  "use strict";

  var pagesEl = document.getElementById("pages");
  if (!pagesEl) {
    return;
  }
  var pages = Array.prototype.slice.call(pagesEl.querySelectorAll("section.page"));
  var editable = pagesEl.getAttribute("data-editable") === "1";
  var counter = document.getElementById("counter");
  var prev = document.getElementById("prev");
  var next = document.getElementById("next");
  var everyNext = document.getElementById("every-next");
  var viewport = document.getElementById("viewport");
  var rails = Array.prototype.slice.call(document.querySelectorAll(".rail .findings"));
  var thumbs = Array.prototype.slice.call(document.querySelectorAll(".thumbs .thumb"));
  var current = 0;
  var zoom = 0; // 0: fit width; else a factor of the page's actual size (1 pt = 4/3 px)
  var LEVELS = [1, 1.25, 1.5, 2, 3, 4];
  var output = false; // which copy the page shows: the source or the redacted output
  var sideBySide = false;

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

  function numbers(text) {
    return text.split(" ").map(Number);
  }

  function pageSize(sheet) {
    return [
      parseFloat(sheet.getAttribute("data-width-pt")),
      parseFloat(sheet.getAttribute("data-height-pt"))
    ];
  }

  // positions in % of the upright page: the image may be drawn at any size
  function place(btn, sheet) {
    var size = pageSize(sheet);
    var b = numbers(btn.getAttribute("data-box"));
    btn.style.left = (100 * b[0] / size[0]) + "%";
    btn.style.top = (100 * b[1] / size[1]) + "%";
    btn.style.width = (100 * (b[2] - b[0]) / size[0]) + "%";
    btn.style.height = (100 * (b[3] - b[1]) / size[1]) + "%";
  }

  function stateOf(btn) {
    if (btn.classList.contains("removed")) {
      return "kept";
    }
    return btn.classList.contains("doubt") ? "doubt, burned" : "burned";
  }

  function setRemoved(btn, removed) {
    btn.classList.toggle("removed", removed);
    btn.setAttribute("aria-pressed", removed ? "true" : "false");
    var state = document.querySelector(
      '[data-testid="state-' + btn.getAttribute("data-testid").slice(4) + '"]'
    );
    if (state) {
      state.textContent = stateOf(btn);
    }
    var ident = btn.getAttribute("data-ident");
    btn.setAttribute(
      "aria-label",
      removed
        ? ident + ": removed, the text stays; press to redact it again"
        : ident + ": press to remove; the text stays"
    );
  }

  function onBox(event) {
    var btn = event.currentTarget;
    if (btn.disabled) {
      return;
    }
    if (btn.getAttribute("data-origin") === "drawn") {
      btn.parentNode.removeChild(btn);
      return;
    }
    setRemoved(btn, !btn.classList.contains("removed"));
  }

  function sheets() {
    return Array.prototype.slice.call(pagesEl.querySelectorAll(".sheet[data-width-pt]"));
  }

  sheets().forEach(function (sheet) {
    Array.prototype.forEach.call(sheet.querySelectorAll("button.box"), function (btn) {
      place(btn, sheet);
      btn.addEventListener("click", onBox);
    });
    // what the check found again: placed like the boxes, never pressed (no correction)
    Array.prototype.forEach.call(sheet.querySelectorAll(".box.again"), function (mark) {
      place(mark, sheet);
    });
  });

  // --- drawing a box: drag on the source image ---
  var drawn = 0;

  function makeBox(sheet, box) {
    var page = sheet.getAttribute("data-page");
    var every = everyNext !== null && everyNext.checked;
    var kind = every ? "every" : "manual";
    drawn += 1;
    var what = every ? "every-occurrence area" : "manual box";
    var ident = "drawn " + what + " " + drawn + " on page " + page;
    var btn = document.createElement("button");
    btn.type = "button";
    btn.className = "box k-" + kind;
    btn.setAttribute("data-kind", kind);
    btn.setAttribute("data-origin", "drawn");
    btn.setAttribute("data-page", page);
    btn.setAttribute("data-box", box.map(function (v) { return v.toFixed(2); }).join(" "));
    btn.setAttribute("data-ident", ident);
    btn.setAttribute("data-testid", "drawn-" + page + "-" + drawn);
    btn.setAttribute("aria-label", ident + ": press to remove this box");
    btn.addEventListener("click", onBox);
    sheet.appendChild(btn);
    place(btn, sheet);
    var rail = document.querySelector('.rail .findings[data-page="' + page + '"]');
    if (rail) {
      var list = rail.querySelector("ol");
      if (!list) {
        list = document.createElement("ol");
        rail.appendChild(list);
      }
      var li = document.createElement("li");
      var entry = document.createElement("button");
      entry.type = "button";
      entry.className = "finding";
      entry.setAttribute("data-for", "drawn-" + page + "-" + drawn);
      entry.textContent = (every ? "every" : "manual") + " (drawn) · page " + page + " · burned";
      entry.addEventListener("click", function () { btn.focus(); });
      li.appendChild(entry);
      list.appendChild(li);
      btn.addEventListener("click", function () {
        if (li.parentNode) {
          li.parentNode.removeChild(li);
        }
      });
    }
    if (everyNext) {
      everyNext.checked = false; // "the next box I draw": one box
    }
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

  // --- the whole set of corrections, written into the Apply form as it is sent ---
  function area(btn) {
    return {
      page: parseInt(btn.getAttribute("data-page"), 10),
      box: numbers(btn.getAttribute("data-box"))
    };
  }

  function corrections() {
    var out = { removed: [], manual: [], every: [] };
    Array.prototype.forEach.call(pagesEl.querySelectorAll("button.box"), function (btn) {
      var kind = btn.getAttribute("data-kind");
      var removed = btn.classList.contains("removed");
      if (kind === "manual" || kind === "every") {
        if (!removed) {
          out[kind].push(area(btn));
        }
      } else if (removed) {
        out.removed.push(area(btn));
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
  var approveFormEl = document.getElementById("approve-form");
  if (approveFormEl && pendingField && editable) {
    approveFormEl.addEventListener("submit", function () {
      var now = keys(corrections());
      var changed = now.filter(function (k) { return initial.indexOf(k) < 0; }).length +
        initial.filter(function (k) { return now.indexOf(k) < 0; }).length;
      pendingField.value = String(changed);
    });
  }

  // --- keys: n / → next, p / ← previous, Shift+A approve ---
  var approveForm = document.getElementById("approve-form");
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
    if (event.key === "n" || event.key === "ArrowRight") {
      show(current + 1);
      event.preventDefault();
    } else if (event.key === "p" || event.key === "ArrowLeft") {
      show(current - 1);
      event.preventDefault();
    } else if (event.key === "+" || event.key === "=") {
      step(1);
      event.preventDefault();
    } else if (event.key === "-" || event.key === "_") {
      step(-1);
      event.preventDefault();
    } else if (event.key === "0") {
      setZoom(0);
      event.preventDefault();
    } else if (event.key === "o") {
      setOutput(!output);
      event.preventDefault();
    } else if ((event.key === "A" || event.key === "a") && event.shiftKey && approveForm) {
      event.preventDefault();
      if (approveForm.requestSubmit) {
        approveForm.requestSubmit();
      } else {
        approveForm.submit();
      }
    }
  });

  if (prev) {
    prev.addEventListener("click", function () { show(current - 1); });
  }
  if (next) {
    next.addEventListener("click", function () { show(current + 1); });
  }
  // --- size, zoom, pan, which copy: the picture is asked for at the size it is drawn ---
  function fitWidth() {
    var w = viewport ? viewport.clientWidth - 24 : 900;
    return sideBySide ? (w - 16) / 2 : w;
  }

  function drawnWidth(sheet) {
    var size = pageSize(sheet);
    if (zoom === 0 || !size[0]) {
      return Math.max(200, fitWidth());
    }
    return size[0] * 4 / 3 * zoom;
  }

  function pictureUrl(base, cssWidth) {
    var ratio = window.devicePixelRatio || 1;
    // in steps of 250 px: zooming back and forth asks for pictures the desk made already
    var px = Math.min(4000, Math.max(250, Math.ceil(cssWidth * ratio / 250) * 250));
    return base + (base.indexOf("?") < 0 ? "?" : "&") + "w=" + px;
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
    var sheet = page.querySelector(".sheet:not(.twin)");
    var twin = page.querySelector(".sheet.twin");
    var width = drawnWidth(sheet);
    var fitsBoth = viewport && (pageSize(sheet)[0] * 4 / 3 * 2 + 40 <= viewport.clientWidth);
    var sideToggle = document.getElementById("side-by-side");
    if (sideToggle) {
      sideToggle.disabled = !fitsBoth && !sideBySide;
    }
    var size = pageSize(sheet);
    [sheet, twin].forEach(function (s) {
      if (s) {
        s.style.width = width + "px";
        if (size[0] && size[1]) {
          s.style.aspectRatio = size[0] + " / " + size[1]; // its place before the picture comes
        }
      }
    });
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
      level.textContent = zoom === 0 ? "fit" : Math.round(zoom * 100) + " %";
    }
    var fit = document.getElementById("zoom-fit");
    if (fit) {
      fit.setAttribute("aria-pressed", zoom === 0 ? "true" : "false");
    }
  }

  function setZoom(z) {
    var before = viewport ? [viewport.scrollLeft, viewport.scrollTop, viewport.scrollWidth] : null;
    zoom = z;
    layout();
    if (viewport && before && before[2]) {
      // keep the same part of the page in view
      var k = viewport.scrollWidth / before[2];
      viewport.scrollLeft = before[0] * k;
      viewport.scrollTop = before[1] * k;
    }
  }

  function step(direction) {
    var sheet = pages[current] && pages[current].querySelector(".sheet:not(.twin)");
    var size = sheet ? pageSize(sheet) : [0];
    var now = zoom === 0 && size[0] ? fitWidth() / (size[0] * 4 / 3) : zoom;
    var next = null;
    if (direction > 0) {
      next = LEVELS.filter(function (l) { return l > now + 0.01; })[0];
    } else {
      next = LEVELS.filter(function (l) { return l < now - 0.01; }).pop();
    }
    if (next === undefined || next === null) {
      next = direction > 0 ? LEVELS[LEVELS.length - 1] : LEVELS[0];
    }
    setZoom(next);
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
  on("zoom-fit", function () { setZoom(0); });
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
  window.addEventListener("resize", function () { layout(); });

  // pan: hold Space and drag (or scroll)
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

  // thumbnails jump to their page; a finding's line in the rail finds its box
  thumbs.forEach(function (t) {
    t.addEventListener("click", function () {
      show(parseInt(t.getAttribute("data-goto"), 10) - 1);
    });
  });
  Array.prototype.forEach.call(document.querySelectorAll(".rail .finding"), function (entry) {
    var box = document.querySelector('[data-testid="' + entry.getAttribute("data-for") + '"]');
    if (!box) {
      return;
    }
    function light(onOff) {
      box.classList.toggle("lit", onOff);
      entry.classList.toggle("lit", onOff);
    }
    entry.addEventListener("mouseenter", function () { light(true); });
    entry.addEventListener("mouseleave", function () { light(false); });
    entry.addEventListener("focus", function () { light(true); });
    entry.addEventListener("blur", function () { light(false); });
    box.addEventListener("mouseenter", function () { light(true); });
    box.addEventListener("mouseleave", function () { light(false); });
    box.addEventListener("focus", function () { light(true); });
    box.addEventListener("blur", function () { light(false); });
    entry.addEventListener("click", function () {
      if (box.disabled || box.tagName !== "BUTTON") {
        box.scrollIntoView({ block: "center", inline: "center" });
        return;
      }
      box.click();
      box.scrollIntoView({ block: "center", inline: "center" });
    });
  });

  show(0);
})();
