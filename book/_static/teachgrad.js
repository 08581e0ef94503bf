/* The book's own few lines of JavaScript (loaded on every page by book/conf.py). */
(function () {
  "use strict";

  /* 1. The phone navigation drawer.
   * pydata-sphinx-theme 0.20 (under sphinx-book-theme 1.4) hooks its "open the navigation" code to
   * the FIRST button with class primary-toggle only (document.querySelector; the theme's issue
   * #2451). That one sits in a header the book theme hides; the button a reader sees and taps is a
   * second one, so nothing happens. Each other primary-toggle passes its click on to the first,
   * whose handlers do the rest: on a narrow screen they open the drawer (a <dialog> holding the
   * navigation), on a wide one sphinx-book-theme's own handler folds the sidebar. */
  function forwardPrimaryToggles() {
    var toggles = document.querySelectorAll(".primary-toggle");
    var first = toggles[0];
    for (var i = 1; i < toggles.length; i++) {
      toggles[i].addEventListener("click", function (event) {
        event.preventDefault();
        event.stopPropagation();
        withoutTooltipOnTouch(event.currentTarget);
        first.click();
      });
    }
  }

  /* The theme gives the button a tooltip ("Toggle primary sidebar") shown on hover or focus. A tap focuses
   * the button, and closing the drawer hands the focus back to it, so on a phone the tooltip came up over
   * the page after the drawer closed and stayed there. A screen that cannot hover gets no tooltip (the
   * button keeps its name); a mouse still gets it. */
  function withoutTooltipOnTouch(button) {
    var tooltip = window.bootstrap && window.bootstrap.Tooltip && window.bootstrap.Tooltip.getInstance(button);
    if (tooltip && window.matchMedia("(hover: none)").matches) {
      tooltip.dispose();   // also cancels a tooltip about to be shown
    }
  }

  /* 2. Drawings full-size on a tap.
   * A graph is drawn for a laptop page; on a phone it is shrunk to the screen's width and its
   * labels become too small to read. Each drawing in an output (graphs, plots, the stepper's
   * frames) is a button that opens it at its own size in a dialog, scrollable both ways. */
  var viewer = null;

  function openFullSize(image) {
    if (!viewer) {
      viewer = document.createElement("dialog");
      viewer.className = "tg-full-size";
      viewer.setAttribute("aria-label", "drawing at full size");
      viewer.innerHTML = '<button type="button" class="tg-full-size-close">close \u2715</button>' +
        '<div class="tg-full-size-frame"></div>';
      viewer.querySelector("button").addEventListener("click", function () { viewer.close(); });
      viewer.addEventListener("click", function (event) { if (event.target === viewer) { viewer.close(); } });
      document.body.appendChild(viewer);
    }
    var copy = document.createElement("img");
    copy.src = image.currentSrc || image.src;
    copy.alt = image.alt;
    copy.width = image.naturalWidth;   // its own size, not the page's
    var frame = viewer.querySelector(".tg-full-size-frame");
    frame.replaceChildren(copy);
    viewer.showModal();
    var left = topNodeX(copy.src, copy.width);
    if (left === null) { left = copy.width / 2; }   // not a graph: its middle
    frame.scrollTo(Math.max(0, left - frame.clientWidth / 2), 0);   // the top of the drawing, its top node in the middle
  }

  /* Where, in pixels across a drawing shown `width` wide, graphviz put its top node (the graph's
   * output), or null when the drawing is no graphviz SVG stored in the page. */
  function topNodeX(src, width) {
    var prefix = "data:image/svg+xml;base64,";
    if (src.indexOf(prefix) !== 0) { return null; }
    try {
      var svg = new DOMParser().parseFromString(atob(src.slice(prefix.length)), "image/svg+xml").documentElement;
      var box = (svg.getAttribute("viewBox") || "").trim().split(/[\s,]+/).map(Number);
      var shift = /translate\(\s*([-\d.]+)/.exec((svg.querySelector("g.graph") || svg).getAttribute("transform") || "");
      var top = null;
      svg.querySelectorAll("g.node text").forEach(function (text) {
        var y = Number(text.getAttribute("y"));
        if (top === null || y < top.y) { top = {x: Number(text.getAttribute("x")), y: y}; }
      });
      if (top === null || box.length !== 4 || !(box[2] > 0)) { return null; }
      return (top.x + (shift ? Number(shift[1]) : 0) - box[0]) * width / box[2];
    } catch (error) {
      return null;
    }
  }

  function zoomableDrawings() {
    var images = document.querySelectorAll("div.cell_output img");
    images.forEach(function (image) {
      if (image.closest("button")) { return; }
      var button = document.createElement("button");
      button.type = "button";
      button.className = "tg-zoom";
      button.title = "open at full size";
      image.parentNode.insertBefore(button, image);
      button.appendChild(image);
      button.addEventListener("click", function () { openFullSize(image); });
    });
  }

  /* 3. A displayed formula wider than a phone scrolls sideways (teachgrad.css); one that does is
   * given a tab stop so a keyboard can scroll it too, as the theme does for wide code blocks. */
  function focusableWideMaths() {
    document.querySelectorAll("div.math").forEach(function (block) {
      if (block.scrollWidth > block.clientWidth + 1) {
        block.tabIndex = 0;
      } else {
        block.removeAttribute("tabindex");
      }
    });
  }

  function afterMathJax() {
    var startup = window.MathJax && window.MathJax.startup;
    if (startup && startup.promise) {
      startup.promise.then(focusableWideMaths);
    }
    window.addEventListener("resize", focusableWideMaths);
  }

  /* 4. Accessible names that match what a reader sees (WCAG 2.5.3): the theme's search button says
   * "Search Ctrl+K" but is named "Search"; MyST-NB's "Show solution" is named "Toggle hidden content".
   * Without the aria-label, each is named by its visible text. */
  function namesAsShown() {
    document.querySelectorAll(".search-button__button[aria-label], details > summary[aria-label]").forEach(function (e) {
      if (e.textContent.trim()) {
        e.removeAttribute("aria-label");
      }
    });
  }

  /* 5. The book's title at the top of the sidebar sits in no landmark (axe's "region" rule): it is the
   * way home, so it is marked as a small navigation of its own. */
  function titleInALandmark() {
    var brand = document.querySelector(".sidebar-primary-items__start > .sidebar-primary-item:first-child");
    if (brand && brand.querySelector("a.navbar-brand") && !brand.closest("nav, [role]")) {
      brand.setAttribute("role", "navigation");
      brand.setAttribute("aria-label", "the book's home");
    }
  }

  function ready(fn) {
    if (document.readyState !== "loading") { fn(); } else { document.addEventListener("DOMContentLoaded", fn); }
  }
  ready(forwardPrimaryToggles);
  ready(zoomableDrawings);
  ready(namesAsShown);
  ready(titleInALandmark);
  window.addEventListener("load", afterMathJax);
})();
