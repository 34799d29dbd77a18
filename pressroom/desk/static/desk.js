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
  var current = 0;

  function show(i) {
    if (i < 0 || i >= pages.length) {
      return;
    }
    current = i;
    pages.forEach(function (p, j) {
      p.hidden = j !== i;
    });
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

  function setRemoved(btn, removed) {
    btn.classList.toggle("removed", removed);
    btn.setAttribute("aria-pressed", removed ? "true" : "false");
    var label = btn.querySelector(".label");
    if (label) {
      label.textContent = removed ? "kept" : btn.getAttribute("data-label");
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
    btn.setAttribute("data-label", every ? "every" : "manual");
    btn.setAttribute("data-ident", ident);
    btn.setAttribute("data-testid", "drawn-" + page + "-" + drawn);
    btn.setAttribute("aria-label", ident + ": press to remove this box");
    var label = document.createElement("span");
    label.className = "label";
    label.textContent = every ? "every" : "manual";
    btn.appendChild(label);
    btn.addEventListener("click", onBox);
    sheet.appendChild(btn);
    place(btn, sheet);
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
        if (event.button !== 0) {
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
  show(0);
})();
