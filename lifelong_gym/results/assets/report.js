"use strict";
// The session table (virtualised: only the rows in view exist) and the conversation view.
// Every text from the run is put in the page with textContent, never as markup.
(function () {
  const ROW_HEIGHT = 30;
  const OVERSCAN = 12;
  const MAX_VIEWPORT = 450;
  const data = readJson("report-data");
  const rows = data.rows; // [position, task, status, outcome, [skills], turns, reward, snippet, memory characters if data.memory]
  const byTask = new Map(rows.map((row) => [row[1], row[0]]));
  const state = { status: "", outcome: "", skill: "", text: "", shown: rows, selected: null };
  let haystack = null; // lower-cased text of each conversation, built on the first search
  let indexing = null;

  function readJson(id) {
    const block = document.getElementById(id);
    return block ? JSON.parse(block.textContent) : null;
  }

  function make(tag, className, ...children) {
    const node = document.createElement(tag);
    if (className) node.className = className;
    for (const child of children) {
      if (child === null || child === undefined) continue;
      node.append(child instanceof Node ? child : String(child));
    }
    return node;
  }

  // -- filters ------------------------------------------------------------------------

  const filters = document.getElementById("filters");
  const count = make("span", "count");
  function select(name, label, values, counts) {
    const box = make("select");
    box.id = "filter-" + name;
    box.append(new Option("all " + label, ""));
    values.forEach((value, i) => box.append(new Option(value + " (" + counts[i] + ")", String(i))));
    box.addEventListener("change", () => { state[name] = box.value; applyFilters(); });
    filters.append(make("label", "", label, box));
    return box;
  }
  const tally = (column, size) => {
    const counts = new Array(size).fill(0);
    for (const row of rows) {
      if (column === 4) row[4].forEach((k) => counts[k]++); else counts[row[column]]++;
    }
    return counts;
  };
  const statusBox = select("status", "statuses", data.statuses, tally(2, data.statuses.length));
  select("outcome", "outcomes", data.outcomes, tally(3, data.outcomes.length));
  select("skill", "skills", data.skills, tally(4, data.skills.length));
  const search = make("input");
  search.type = "search";
  search.id = "filter-text";
  search.placeholder = "search the conversations";
  let typing = null;
  search.addEventListener("input", () => {
    clearTimeout(typing);
    typing = setTimeout(() => { state.text = search.value.trim().toLowerCase(); applyFilters(); }, 200);
  });
  filters.append(make("label", "", "text", search));
  const reset = make("button", "", "clear filters");
  reset.type = "button";
  reset.addEventListener("click", () => {
    for (const box of filters.querySelectorAll("select")) box.value = "";
    search.value = "";
    Object.assign(state, { status: "", outcome: "", skill: "", text: "" });
    applyFilters();
  });
  filters.append(reset, count);
  count.id = "shown-count";

  for (const chip of document.querySelectorAll(".chip[data-status]")) {
    chip.addEventListener("click", () => {
      const index = data.statuses.indexOf(chip.dataset.status);
      state.status = state.status === String(index) ? "" : String(index);
      statusBox.value = state.status;
      applyFilters();
    });
  }

  async function buildHaystack() {
    const texts = new Array(rows.length);
    for (let i = 0; i < rows.length; i++) {
      const conversation = readJson("c-" + rows[i][0]);
      const parts = conversation.m.map((message) => message[1]);
      if (conversation.e) parts.push(conversation.e);
      parts.push(rows[i][7]);
      texts[i] = parts.join("\n").toLowerCase();
      if (i % 500 === 499) {
        count.textContent = "indexing conversations " + Math.round((100 * i) / rows.length) + "%";
        await new Promise((done) => setTimeout(done, 0));
      }
    }
    haystack = texts;
  }

  async function applyFilters() {
    if (state.text && !haystack) {
      indexing = indexing || buildHaystack();
      await indexing;
    }
    const status = state.status === "" ? -1 : Number(state.status);
    const outcome = state.outcome === "" ? -1 : Number(state.outcome);
    const skill = state.skill === "" ? -1 : Number(state.skill);
    const text = state.text;
    const shown = [];
    for (let i = 0; i < rows.length; i++) {
      const row = rows[i];
      if (status >= 0 && row[2] !== status) continue;
      if (outcome >= 0 && row[3] !== outcome) continue;
      if (skill >= 0 && !row[4].includes(skill)) continue;
      if (text && !haystack[i].includes(text)) continue;
      shown.push(row);
    }
    state.shown = shown;
    for (const chip of document.querySelectorAll(".chip[data-status]")) {
      chip.classList.toggle("active", data.statuses.indexOf(chip.dataset.status) === status);
    }
    count.textContent = shown.length + " of " + rows.length + " sessions";
    count.dataset.shown = String(shown.length);
    spacer.style.height = shown.length * ROW_HEIGHT + "px";
    viewport.style.height = Math.min(MAX_VIEWPORT, Math.max(shown.length, 1) * ROW_HEIGHT + 2) + "px";
    viewport.scrollTop = 0;
    empty.hidden = shown.length > 0;
    renderRows();
  }

  // -- the table ------------------------------------------------------------------------

  const table = document.getElementById("session-table");
  const head = make("div", "row head");
  const titles = ["#", "task", "status", "outcome", "turns", "reward", "skills", "task text"];
  if (data.memory) titles.push("memory");
  for (const title of titles) {
    head.append(make("span", ["#", "task", "turns", "reward", "memory"].includes(title) ? "num" : "", title));
  }
  if (data.memory) table.classList.add("with-memory");
  const viewport = make("div", "viewport");
  viewport.id = "session-rows";
  viewport.tabIndex = 0;
  const spacer = make("div", "spacer");
  const empty = make("div", "empty", "No session matches these filters.");
  empty.hidden = true;
  viewport.append(spacer);
  table.append(head, viewport, empty);
  let frame = 0;
  viewport.addEventListener("scroll", () => {
    if (!frame) frame = requestAnimationFrame(() => { frame = 0; renderRows(); });
  });

  function statusNode(name) {
    const node = make("span", "status", name);
    node.style.setProperty("--dot", data.colors[name] || "#bab0ac");
    return node;
  }

  function rowNode(row, top) {
    const node = make("div", "row");
    node.style.top = top + "px";
    node.dataset.position = String(row[0]);
    node.setAttribute("role", "row");
    const outcome = data.outcomes[row[3]];
    const skills = row[4].map((k) => data.skills[k]).join(", ");
    node.append(
      make("span", "num", row[0]),
      make("span", "num", row[1]),
      statusNode(data.statuses[row[2]]),
      make("span", "outcome-" + outcome, outcome),
      make("span", "num", row[5]),
      make("span", "num", row[6]),
      make("span", "", skills),
      make("span", "", row[7]),
    );
    if (data.memory) node.append(make("span", "num", row[8]));
    node.title = skills;
    if (row[0] === state.selected) node.classList.add("selected");
    node.addEventListener("click", () => { location.hash = "session-" + row[0]; });
    return node;
  }

  function renderRows() {
    const first = Math.max(0, Math.floor(viewport.scrollTop / ROW_HEIGHT) - OVERSCAN);
    const visible = Math.ceil(viewport.clientHeight / ROW_HEIGHT) + 2 * OVERSCAN;
    const last = Math.min(state.shown.length, first + visible);
    const nodes = [];
    for (let i = first; i < last; i++) nodes.push(rowNode(state.shown[i], i * ROW_HEIGHT));
    spacer.replaceChildren(...nodes);
  }

  // -- one session --------------------------------------------------------------------

  const view = document.getElementById("session-view");

  const isPlain = (v) => v === null || typeof v !== "object";
  const compact = (v) => (Array.isArray(v) && v.every(isPlain) ? "[" + v.map((x) => JSON.stringify(x)).join(", ") + "]" : JSON.stringify(v, null, 1));

  function valueNode(value) {
    if (typeof value === "string") return make("pre", "", value);
    if (Array.isArray(value) && value.every((v) => typeof v === "string")) return make("pre", "", value.join("\n"));
    if (Array.isArray(value) && value.every(isPlain)) return make("pre", "", compact(value));
    if (Array.isArray(value)) return make("pre", "", value.map(compact).join("\n"));
    if (value && typeof value === "object") return keyValues(value);
    return make("pre", "", JSON.stringify(value));
  }

  function keyValues(object) {
    const list = make("dl", "kv");
    for (const [key, value] of Object.entries(object)) {
      if (value !== null) list.append(make("dt", "", key), make("dd", "", valueNode(value)));
    }
    return list;
  }

  function box(title, ...content) {
    return make("section", "", make("h3", "", title), ...content);
  }

  function turnTags(details, turn) {
    const tags = [];
    if (Array.isArray(details.executed) && turn < details.executed.length) {
      const ok = details.executed[turn];
      tags.push(make("span", "tag " + (ok ? "ok" : "fail"), ok ? "executed" : "failed"));
    }
    if (Array.isArray(details.exit_codes) && turn < details.exit_codes.length) {
      const code = details.exit_codes[turn];
      tags.push(make("span", "tag " + (code === 0 ? "ok" : "fail"), code === null ? "no exit code" : "exit code " + code));
    }
    if (Array.isArray(details.self_consistency) && turn < details.self_consistency.length) {
      const vote = details.self_consistency[turn];
      const votes = vote.votes ? " " + vote.votes.join("/") : "";
      tags.push(make("span", "tag", "vote: " + vote.chosen_by + votes + (vote.reason ? " (" + vote.reason + ")" : "")));
    }
    return tags;
  }

  function conversationNode(conversation) {
    const list = make("div", "conversation");
    let reply = 0;
    let observation = 0;
    conversation.m.forEach(([role, text], i) => {
      const agent = role === 1;
      const label = agent ? "reply " + ++reply : i === 0 ? "prompt" : "observation " + ++observation;
      const message = make("div", "msg " + (agent ? "agent" : "user"));
      message.dataset.role = agent ? "agent" : "user";
      const header = make("div", "msg-head", label);
      if (agent) header.append(...turnTags(conversation.d, reply - 1));
      message.append(header);
      if (i === 0 && conversation.p) {
        const fold = make("details", "", make("summary", "", "instructions shared by every task (" + data.prefix.length + " characters)"), make("pre", "", data.prefix));
        message.append(fold);
      }
      message.append(make("pre", "content", text === "" ? "(empty)" : text));
      list.append(message);
    });
    return list;
  }

  function variablesNode(messages) {
    const rowsOut = [];
    for (let i = 0; i + 1 < messages.length; i++) {
      const action = messages[i][0] === 1 && /Action:\s*(.+)/.exec(messages[i][1]);
      const made = action && /variable (#\d+), which holds ([^\n]+)/.exec(messages[i + 1][1]);
      if (made) rowsOut.push([made[1], action[1].trim(), made[2]]);
    }
    if (!rowsOut.length) return null;
    const table = make("table", "vars", make("tr", "", make("th", "", "variable"), make("th", "", "made by"), make("th", "", "holds")));
    for (const cells of rowsOut) table.append(make("tr", "", ...cells.map((c) => make("td", "mono", c))));
    return box("Variables", table);
  }

  function methodNode(details) {
    if (!Array.isArray(details.replayed)) return null;
    if (!details.replayed.length) return box("Experience replay", "No earlier task was put into this prompt.");
    const links = make("p", "", "Put into the prompt: ");
    details.replayed.forEach((task, i) => {
      const link = make("a", "", "task " + task);
      link.href = "#task-" + task;
      links.append(i ? ", " : "", link);
    });
    return box("Experience replay", links);
  }

  function memoryNode(records) {
    if (!Array.isArray(records)) return null;
    const list = make("div", "");
    for (const record of records) {
      const heading = make("summary", "", record.title + " · " + record.chars + " characters");
      list.append(make("details", "", heading, make("pre", "", record.text)));
    }
    const node = box("Memory inserted", list);
    node.id = "memory-inserted";
    return node;
  }

  function showSession(position) {
    const row = rows[position - 1];
    if (!row) return;
    state.selected = position;
    const conversation = readJson("c-" + position);
    const task = readJson("t-" + row[1]);
    const details = Object.assign({}, conversation.d);
    const side = make("div", "side");
    const method = methodNode(details);
    if (method) side.append(method);
    const memory = memoryNode(details.memory);
    if (memory) side.append(memory);
    if (task) {
      if (task.text) side.append(box("Task", make("pre", "", task.text)));
      side.append(box("Reference solution", Object.keys(task.reference).length ? keyValues(task.reference) : "The task record holds no reference solution."));
    } else {
      side.append(box("Reference solution", data.taskNote || "The task of this session is not in the task set."));
    }
    const variables = variablesNode(conversation.m);
    if (variables) side.append(variables);
    delete details.replayed;
    delete details.memory;
    side.append(box("Scoring details", Object.keys(details).length ? keyValues(details) : "none recorded"));
    if (task && Object.keys(task.other).length) {
      const more = make("details", "", make("summary", "", "the rest of the task record"), keyValues(task.other));
      side.append(box("Task record", more));
    }
    const status = data.statuses[row[2]];
    const outcome = data.outcomes[row[3]];
    const heading = make("div", "session-head",
      make("h2", "", "Session " + position + " · task " + row[1]),
      statusNode(status),
      make("span", "badge outcome-" + outcome, outcome),
      make("span", "badge", "reward " + row[6]),
      make("span", "badge", row[5] + " replies"));
    const skills = make("div", "skills", ...row[4].map((k) => make("span", "skill", data.skills[k])));
    const error = conversation.e ? make("pre", "error", "error: " + conversation.e) : null;
    view.replaceChildren(heading, skills, error || "", make("div", "split", conversationNode(conversation), side));
    heading.append(navigation(row));
    view.dataset.position = String(position);
    view.hidden = false;
    const index = state.shown.indexOf(row);
    if (index >= 0 && (index * ROW_HEIGHT < viewport.scrollTop || (index + 1) * ROW_HEIGHT > viewport.scrollTop + viewport.clientHeight)) {
      viewport.scrollTop = Math.max(0, index * ROW_HEIGHT - 3 * ROW_HEIGHT);
    }
    renderRows();
    view.scrollIntoView({ block: "start" });
  }

  // links to the sessions before and after this one among those the filters show, and up
  function navigation(row) {
    const index = state.shown.indexOf(row);
    const link = (text, anchor, id) => {
      const node = anchor ? make("a", "", text) : make("span", "disabled", text);
      if (anchor) node.href = anchor;
      node.id = id;
      return node;
    };
    const at = (i) => (index >= 0 && i >= 0 && i < state.shown.length ? "#session-" + state.shown[i][0] : null);
    return make("nav", "session-nav",
      link("← previous", at(index - 1), "session-previous"),
      link("next →", at(index + 1), "session-next"),
      link("↑ the table", "#sessions", "session-up"));
  }

  function followHash() {
    const found = /^#(session|task)-(\d+)$/.exec(location.hash);
    if (!found) return;
    const number = Number(found[2]);
    const position = found[1] === "task" ? byTask.get(number) : number;
    if (position === undefined) {
      view.replaceChildren(make("p", "note", "This run has no session of task " + number + "."));
      view.hidden = false;
      return;
    }
    showSession(position);
  }

  window.addEventListener("hashchange", followHash);
  applyFilters().then(followHash);
})();
