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
        first.click();
      });
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
    frame.scrollTo(0, 0);
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

  function ready(fn) {
    if (document.readyState !== "loading") { fn(); } else { document.addEventListener("DOMContentLoaded", fn); }
  }
  ready(forwardPrimaryToggles);
  ready(zoomableDrawings);
})();
