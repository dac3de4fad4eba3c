package main

import (
	"os"

	"github.com/custody-sh/custody/machine"
)

// palette colours the words that carry a verdict or a state in human
// output: what goes (or went) green, what is kept yellow, what failed red;
// a record's state by what it asks of a person. The zero palette colours
// nothing, and every word reads the same without colour: the colour only
// repeats what the word says.
type palette struct{ on bool }

// SGR colours custody uses (ECMA-48 Select Graphic Rendition).
const (
	sgrGreen  = "32"
	sgrYellow = "33"
	sgrRed    = "31"
	sgrCyan   = "36"
	sgrDim    = "2"
)

// paint wraps s in the SGR colour code, then resets it.
func (p palette) paint(code, s string) string {
	if !p.on || s == "" {
		return s
	}
	return "\033[" + code + "m" + s + "\033[m"
}

// goes colours what a plan removes or settles, or what apply did: green.
func (p palette) goes(s string) string { return p.paint(sgrGreen, s) }

// kept colours what is kept for a person to settle: yellow.
func (p palette) kept(s string) string { return p.paint(sgrYellow, s) }

// outcome colours an item's outcome word: green when it settles the item,
// red when it failed, yellow for any other (kept, refused, stale, ...).
func (p palette) outcome(o machine.Outcome) string {
	switch {
	case o.Settled():
		return p.paint(sgrGreen, string(o))
	case o == machine.OutcomeFailed:
		return p.paint(sgrRed, string(o))
	}
	return p.paint(sgrYellow, string(o))
}

// action colours a plan item's action: green for what goes, yellow kept.
func (p palette) action(a machine.Action) string {
	if a == machine.ActionKeep {
		return p.kept(string(a))
	}
	return p.goes(string(a))
}

// state colours a record's state: active green (in use), finished cyan
// (waiting for plan and apply), a state that carries an intent yellow
// (provisioning, relocating, removing: custody resume settles it if it
// was interrupted), tombstoned dim (gone).
func (p palette) state(s machine.State) string {
	switch s {
	case machine.StateActive:
		return p.paint(sgrGreen, string(s))
	case machine.StateFinished:
		return p.paint(sgrCyan, string(s))
	case machine.StateTombstoned:
		return p.paint(sgrDim, string(s))
	case machine.StateProvisioning, machine.StateRelocating, machine.StateRemoving:
		return p.paint(sgrYellow, string(s))
	}
	return string(s)
}

// palette is the colours of this command's human output on stdout: on
// only when stdout is a terminal that takes escapes (escapesAllowed:
// NO_COLOR unset, TERM not dumb) and output is not --json. Output paged
// through less keeps them (LESS=FRX, as git sets it).
func (a *App) palette() palette {
	if a.Globals.JSON {
		return palette{}
	}
	f, ok := a.Stdout.(*os.File)
	return palette{on: ok && isTerminal(f) && escapesAllowed(true, a.getenv)}
}
