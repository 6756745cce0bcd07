package ui

// panel is what this viewer has open in the board's place: nothing, the
// selected process's logs, the topic's partitions (t), why (w) or the
// scenario picker (g). One at a time: opening one closes the other.
type panel int

const (
	noPanel panel = iota
	logsPanel
	partitionsPanel
	whyPanel
	pickerPanel
)

// overlays is what covers the board for this viewer: one panel, and the ?
// help over the footer, which stays open over any panel.
type overlays struct {
	panel panel
	help  bool
}

// is reports whether p is open.
func (o overlays) is(p panel) bool { return o.panel == p }

// toggle opens p in place of any other panel, or closes it if it is open;
// it reports whether p is open now.
func (o *overlays) toggle(p panel) bool {
	if o.panel == p {
		o.panel = noPanel
		return false
	}
	o.panel = p
	return true
}

// open opens p in place of any other panel.
func (o *overlays) open(p panel) { o.panel = p }

// close closes p if it is open.
func (o *overlays) close(p panel) {
	if o.panel == p {
		o.panel = noPanel
	}
}
