"use strict";
// One button per list of differing tasks: open or close all its skill groups at once.
(function () {
  for (const list of document.querySelectorAll(".diff")) {
    const groups = list.querySelectorAll("details");
    if (!groups.length) continue;
    const toggle = document.createElement("button");
    toggle.type = "button";
    toggle.textContent = "open all";
    toggle.addEventListener("click", () => {
      const open = toggle.textContent === "open all";
      groups.forEach((group) => { group.open = open; });
      toggle.textContent = open ? "close all" : "open all";
    });
    list.querySelector("h3").append(" ", toggle);
  }
})();
