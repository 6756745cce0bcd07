// The seat: a terminal on the lab's WebSocket. The page sends the keys
// typed and the terminal's size; the lab sends the screen.
"use strict";
const term = new Terminal({ fontSize: 15, fontFamily: "monospace", cursorBlink: false, scrollback: 0 });
const fit = new FitAddon.FitAddon();
term.loadAddon(fit);
term.open(document.getElementById("term"));
fit.fit();

const ws = new WebSocket((location.protocol === "https:" ? "wss://" : "ws://") + location.host + "/ws");
ws.binaryType = "arraybuffer";
const send = (msg) => { if (ws.readyState === WebSocket.OPEN) ws.send(JSON.stringify(msg)); };
const size = () => send({ type: "resize", cols: term.cols, rows: term.rows });

ws.onopen = size;
ws.onmessage = (e) => term.write(new Uint8Array(e.data));
ws.onclose = (e) => {
  term.write("\r\n\x1b[33m" + (e.reason || "the connection to the lab closed") + " · reload the page to come back\x1b[0m\r\n");
};
term.onData((data) => send({ type: "input", data: data }));
term.onResize(size);
window.addEventListener("resize", () => fit.fit());
term.focus();
