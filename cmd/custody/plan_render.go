package main

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/custody-sh/custody/machine"
)

// planSummary sorts a plan's items into what the human plan shows: what
// goes, what is kept and why, and what is only counted (active work and
// trees custody does not own).
type planSummary struct {
	remove  []machine.PlanItem
	destroy []machine.PlanItem
	// settle are records whose tree vanished outside custody.
	settle []machine.PlanItem
	// kept groups the kept items a person can act on by their primary
	// refusal's code, largest group first.
	kept    []keptGroup
	keptN   int
	active  int
	foreign int
}

// keptGroup is the kept items sharing one reason.
type keptGroup struct {
	code  machine.Code
	items []machine.PlanItem
}

// summarize sorts plan's items. Active trees (not finished, or leased) and
// foreign ones are counted, not listed: they are not a person's to settle
// now, and on a fleet they are most of the plan.
func summarize(plan machine.Plan) planSummary {
	var s planSummary
	byCode := map[machine.Code][]machine.PlanItem{}
	for _, it := range plan.Items {
		switch {
		case it.Action == machine.ActionRemove:
			s.remove = append(s.remove, it)
		case it.Action == machine.ActionDestroy:
			s.destroy = append(s.destroy, it)
		case it.Action == machine.ActionSettle:
			s.settle = append(s.settle, it)
		case it.Refusal != nil && (it.Refusal.Code == machine.CodeNotFinished || it.Refusal.Code == machine.CodeLeaseLive):
			s.active++
		case it.Refusal != nil && it.Refusal.Code == machine.CodeForeign:
			s.foreign++
		default:
			code := machine.Code("unknown")
			if it.Refusal != nil {
				code = it.Refusal.Code
			}
			byCode[code] = append(byCode[code], it)
			s.keptN++
		}
	}
	for code, items := range byCode {
		s.kept = append(s.kept, keptGroup{code: code, items: items})
	}
	sort.Slice(s.kept, func(i, j int) bool {
		if len(s.kept[i].items) != len(s.kept[j].items) {
			return len(s.kept[i].items) > len(s.kept[j].items)
		}
		return s.kept[i].code < s.kept[j].code
	})
	return s
}

// line is the one summary line: N to remove, M kept by reason, K active,
// F foreign.
func (s planSummary) line() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d to remove", len(s.remove))
	if len(s.settle) > 0 {
		fmt.Fprintf(&b, ", %d to settle (deleted outside custody)", len(s.settle))
	}
	if len(s.destroy) > 0 {
		fmt.Fprintf(&b, ", %d orphaned resources to destroy", len(s.destroy))
	}
	fmt.Fprintf(&b, ", %d kept", s.keptN)
	if len(s.kept) > 0 {
		parts := make([]string, len(s.kept))
		for i, g := range s.kept {
			parts[i] = fmt.Sprintf("%d %s", len(g.items), g.code)
		}
		fmt.Fprintf(&b, " (%s)", strings.Join(parts, ", "))
	}
	fmt.Fprintf(&b, ", %d active, %d foreign", s.active, s.foreign)
	return b.String()
}

// renderPlan prints the human plan within 80 columns: the summary line,
// the removals, and the kept trees grouped by reason, each group with its
// advice and one retry (a retry that differs from tree to tree is printed
// under each tree), then next, the command that applies it ("" when
// nothing is to be done). verbose prints every item and every refusal
// instead of the groups. Paths and commands are as v shows them, verdicts
// coloured by pal.
func renderPlan(w io.Writer, plan machine.Plan, next string, v pathView, pal palette, verbose bool) {
	if len(plan.Items) == 0 {
		fmt.Fprintln(w, "no worktrees to assess")
		return
	}
	s := summarize(plan)
	paragraph(w, s.line(), 2)
	if verbose {
		renderPlanItems(w, plan, v, pal)
	} else {
		renderRemovals(w, s, v, pal)
		for _, g := range s.kept {
			renderKeptGroup(w, g, v, pal)
		}
	}
	if len(s.remove)+len(s.destroy)+len(s.settle) > 0 && next != "" {
		fmt.Fprintln(w, "next: "+next)
	}
}

// planNext is the line that ends a plan with removals: the apply of the
// file written (out as given, or shown from where the person is), or how
// to make one. Its commands run from where the person is (v.command).
func planNext(out, outPath string, v pathView) string {
	switch {
	case out == stdoutPath:
		return "save the plan from stdout in a file, review it, then: " + v.command("custody apply FILE")
	case out != "":
		file := v.relative(outPath)
		if v.chdir != "" {
			// custody -C DIR apply FILE reads FILE from DIR, as plan -o
			// wrote it there.
			file = out
		}
		return v.command(machine.CommandOn([]string{"custody", "apply"}, file))
	}
	return v.command("custody plan -o plan.json") + ", review it, then: " + v.command("custody apply plan.json")
}

// heading writes a section's heading wrapped within 80 columns, its first
// word (the verdict) coloured by paint.
func heading(w io.Writer, paint func(string) string, verdict, rest string) {
	lines := wrapWords(machine.EscapeControl(verdict+rest), pageWidth, pageWidth)
	if l, ok := strings.CutPrefix(lines[0], verdict); ok {
		lines[0] = paint(verdict) + l
	}
	for _, l := range lines {
		fmt.Fprintln(w, l)
	}
}

// proofText says why a removal is safe: the proof's kind, the commit and
// the advertised ref that holds it.
func proofText(it machine.PlanItem) string {
	if it.Proof == nil {
		return ""
	}
	if it.Proof.Kind == machine.ProofArchive {
		return fmt.Sprintf("archive: %s in archive %s", machine.Abbrev(it.Proof.Head, machine.ShortCommit), it.Proof.Ref)
	}
	s := fmt.Sprintf("%s: %s on %s %s", it.Proof.Kind, machine.Abbrev(it.Proof.Head, machine.ShortCommit), it.Proof.Remote, it.Proof.Ref)
	if it.Proof.Via != "" {
		s += " (via " + machine.Abbrev(it.Proof.Via, machine.ShortCommit) + ")"
	}
	return s
}

// settleText says what settling a vanished tree's record stands on: what
// was proven (never more than the proof covers) and what becomes of its
// branch.
func settleText(it machine.PlanItem) string {
	st := it.Settlement
	if st == nil {
		return ""
	}
	var proven string
	switch {
	case st.WorkProven:
		proven = "work proven, " + proofText(it)
	case st.Proven:
		proven = "only its base commit proven, " + proofText(it)
	default:
		proven = "nothing proves " + machine.Abbrev(st.Head, machine.ShortCommit) + " published"
	}
	switch st.Branch {
	case machine.SettleBranchDelete:
		return proven + "; branch " + it.Branch + " deleted"
	case machine.SettleBranchKeep:
		return proven + "; branch " + it.Branch + " kept: " + st.BranchReason
	}
	return proven + "; no branch"
}

func renderRemovals(w io.Writer, s planSummary, v pathView, pal palette) {
	if len(s.remove) > 0 {
		heading(w, pal.goes, "to remove", ":")
		var rows []row
		for _, it := range sortedByPath(s.remove, v) {
			var sub []row
			for _, d := range it.Discarded {
				sub = append(sub, row{cells: []string{"    discards " + d.Path + "/", fmt.Sprintf("%s, %s", d.Kind, byteSize(d.Bytes))}})
			}
			if it.BranchKept != "" {
				// The branch custody did not create stays: said here,
				// before apply, so nobody counts on it going.
				sub = append(sub, row{cells: []string{"    keeps branch " + it.Branch, it.BranchKept}})
			}
			// What the removal discards or keeps is aligned among itself,
			// under its tree, so it does not widen the trees' column.
			rows = append(rows, row{cells: []string{"  " + v.relative(it.Path), proofText(it)}, under: tableLines(sub)})
		}
		fitTable(w, rows, nil)
	}
	if len(s.settle) > 0 {
		heading(w, pal.goes, "to settle", " (deleted outside custody: nothing to remove, resources destroyed):")
		var rows []row
		for _, it := range sortedByPath(s.settle, v) {
			rows = append(rows, row{cells: []string{"  " + v.relative(it.Path), settleText(it)}})
		}
		fitTable(w, rows, nil)
	}
	if len(s.destroy) > 0 {
		heading(w, pal.goes, "to destroy", " (orphaned resources: their worktree is gone):")
		for _, it := range s.destroy {
			sayf(w, "  %s\n", it.ID)
		}
	}
}

// renderKeptGroup prints one reason's kept trees. When they share one
// retry: the reason with that retry, then one line per tree with its
// reason. When their retries differ (each names its own path or branch):
// the reason and the advice every tree shares (said once), then one line
// per tree with what is particular to it and its retry under it,
// indented, alone on its line so it pastes whole.
func renderKeptGroup(w io.Writer, g keptGroup, v pathView, pal palette) {
	items := sortedByPath(g.items, v)
	retries := make([]string, len(items))
	for i, it := range items {
		retries[i] = "custody plan"
		if it.Refusal != nil {
			retries[i] = v.command(retryOf(it.Refusal), it.Path, v.main)
		}
	}
	common := true
	for _, r := range retries {
		common = common && r == retries[0]
	}
	meaning := machine.Codes()[g.code]
	if meaning == "" {
		meaning = "kept"
	}
	rows := make([]row, len(items))
	if common {
		// A refusal's line, "kept [code]: ...", then at once its retry:
		// the line is not wrapped, and the advice stays in each tree's
		// reason.
		fmt.Fprintf(w, "%s [%s]: %s (%d)\n\tto retry: %s\n", pal.kept("kept"), g.code, meaning, len(items), retries[0])
		for i, it := range items {
			rows[i] = row{cells: []string{"  " + v.relative(itemPath(it)), itemReason(it, v)}}
		}
		fitTable(w, rows, nil)
		return
	}
	// "kept [code] (n): ...", never "[code]: ": that is a refusal's line,
	// which its retry follows at once, and this heading may wrap.
	advice, facts := splitAdvice(items, v)
	head := fmt.Sprintf(" [%s] (%d): %s", g.code, len(items), meaning)
	if advice != "" {
		head += "; " + advice
	}
	heading(w, pal.kept, "kept", head+"; each tree's retry is under it")
	for i, it := range items {
		rows[i] = row{cells: []string{"  " + v.relative(itemPath(it)), facts[i]}, under: []string{"    " + retries[i]}}
	}
	fitTable(w, rows, nil)
}

// splitAdvice is what a group's kept trees are told to do, when they are
// all told the same (the part of each reason after its last "; ", said
// once in the group's heading, each tree's branch named "its branch"),
// and each tree's own part of its reason: the whole reason when the advice
// differs.
func splitAdvice(items []machine.PlanItem, v pathView) (advice string, facts []string) {
	facts = make([]string, len(items))
	advices := make([]string, len(items))
	for i, it := range items {
		facts[i] = itemReason(it, v)
		if it.Refusal == nil {
			continue
		}
		msg := v.message(it, it.Refusal)
		if at := strings.LastIndex(msg, "; "); at >= 0 {
			// The tree's own branch is "its branch" in advice said once
			// for all (its retry names it).
			advices[i] = replaceWord(msg[at+2:], machine.EscapeControl(it.Branch), "its branch")
		}
	}
	if advices[0] == "" {
		return "", facts
	}
	for _, a := range advices {
		if a != advices[0] {
			return "", facts
		}
	}
	for i, it := range items {
		msg := v.message(it, it.Refusal)
		facts[i] = msg[:strings.LastIndex(msg, "; ")] + alsoCodes(it)
	}
	return advices[0], facts
}

// replaceWord is text with every whole-word old (between spaces or the
// ends) replaced by new.
func replaceWord(text, old, new string) string {
	if old == "" {
		return text
	}
	words := strings.Split(text, " ")
	for i, w := range words {
		if w == old {
			words[i] = new
		}
	}
	return strings.Join(words, " ")
}

// itemPath is what names a kept item: its tree's path, or its id when it
// has none (a resource).
func itemPath(it machine.PlanItem) string {
	if it.Path == "" || it.Kind == machine.KindResource {
		return it.ID
	}
	return it.Path
}

// itemReason is the primary refusal's message, and the codes of any other
// reason the tree is kept for.
func itemReason(it machine.PlanItem, v pathView) string {
	if it.Refusal == nil {
		return ""
	}
	return v.message(it, it.Refusal) + alsoCodes(it)
}

// alsoCodes names the other reasons a tree is kept for: " (also CODE,
// ...)", or "" when it has none.
func alsoCodes(it machine.PlanItem) string {
	if it.Refusal == nil {
		return ""
	}
	var also []string
	for _, r := range it.Refusals {
		if r.Code != it.Refusal.Code && !containsCode(also, r.Code) {
			also = append(also, string(r.Code))
		}
	}
	if len(also) == 0 {
		return ""
	}
	return " (also " + strings.Join(also, ", ") + ")"
}

func containsCode(list []string, c machine.Code) bool {
	for _, s := range list {
		if s == string(c) {
			return true
		}
	}
	return false
}

// sortedByPath is items in the order of their shown paths.
func sortedByPath(items []machine.PlanItem, v pathView) []machine.PlanItem {
	out := append([]machine.PlanItem(nil), items...)
	sort.SliceStable(out, func(i, j int) bool { return v.show(itemPath(out[i])) < v.show(itemPath(out[j])) })
	return out
}

// renderPlanItems is the full per-item list (plan --verbose): every item's
// action, id and proof or primary code, then every refusal of every kept
// item with its retry, paths and retries shown from where the person is.
// A refusal is one line however long, so the list can be searched line by
// line.
func renderPlanItems(w io.Writer, plan machine.Plan, v pathView, pal palette) {
	var rows []row
	for _, it := range plan.Items {
		why := ""
		if it.Action == machine.ActionDestroy {
			why = "orphaned resource: its worktree is gone"
		} else if it.Action == machine.ActionSettle {
			why = settleText(it)
		} else if it.Proof != nil {
			why = proofText(it)
			if it.BranchKept != "" {
				why += "; keeps branch " + it.Branch + ": " + it.BranchKept
			}
		} else if it.Refusal != nil {
			why = "[" + string(it.Refusal.Code) + "]"
		}
		rows = append(rows, row{cells: []string{string(it.Action), it.ID, why}})
	}
	layTable(w, rows, func(_, col int, cell string) string {
		if col == 0 {
			return pal.action(machine.Action(cell))
		}
		return cell
	}, 0)
	for _, it := range plan.Items {
		for _, r := range it.Refusals {
			writeRefusalAs(w, pal.kept("kept"), it.ID, v.refusal(it.Path, r))
		}
	}
}

// byteSize renders n bytes for people: "512 B", "3.4 KiB", "12.0 MiB".
func byteSize(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit && exp < 4; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTP"[exp])
}
