package common

// ColumnsFor is what a width holds of a table whose columns come in groups
// (HeldColumns); with every column they widen to fill the width. The
// choice depends on the width alone, never on the values.
func ColumnsFor(width int, groups [][]Column, order []Column) []Column {
	cols := HeldColumns(width, groups, order)
	if len(cols) == len(order) {
		cols = Stretch(cols, width)
	}
	return cols
}

// HeldColumns is what a width holds of a table whose columns come in
// groups, at their own widths: the first group always, each next one while
// it fits (a blank cell apart), in the table's own order.
func HeldColumns(width int, groups [][]Column, order []Column) []Column {
	shown := map[string]bool{}
	n := -1
	for i, g := range groups {
		next := n + 1 + TableWidth(g)
		if i > 0 && next > width {
			break
		}
		for _, c := range g {
			shown[c.Title] = true
		}
		n = next
	}
	var cols []Column
	for _, c := range order {
		if shown[c.Title] {
			cols = append(cols, c)
		}
	}
	return cols
}

// KeepFirst is the n rows a short panel shows: those that matter first
// (what the lesson is about), then the others, all in their own order.
func KeepFirst[R any](rows []R, n int, matters func(R) bool) []R {
	if n >= len(rows) {
		return rows
	}
	keep := make([]bool, len(rows))
	left := n
	for pass := 0; pass < 2 && left > 0; pass++ {
		for i, r := range rows {
			if left == 0 {
				break
			}
			if !keep[i] && (pass == 1 || matters(r)) {
				keep[i], left = true, left-1
			}
		}
	}
	out := make([]R, 0, n)
	for i, r := range rows {
		if keep[i] {
			out = append(out, r)
		}
	}
	return out
}
