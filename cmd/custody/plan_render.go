package main

import (
	"fmt"
	"io"
	"path/filepath"
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

// pathView shows a tree's path to the person who runs custody: relative to
// their current directory when the tree lies below it, or when they work
// inside the main checkout (a sibling tree is ../x); absolute otherwise.
type pathView struct {
	// cwd is the process's current directory ("" when unknown).
	cwd string
	// main is the repository's main checkout.
	main string
}

// show is p as a person reads it: relative to where custody runs when it
// is below it (or below the main checkout), its control characters and
// bytes that are not UTF-8 escaped so it stays on its line.
func (v pathView) show(p string) string { return machine.EscapeControl(v.relative(p)) }

func (v pathView) relative(p string) string {
	if v.cwd == "" || p == "" || !filepath.IsAbs(p) {
		return p
	}
	rel, err := filepath.Rel(v.cwd, p)
	if err != nil {
		return p
	}
	up := rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator))
	if up && !isWithin(v.cwd, v.main) {
		return p
	}
	return rel
}

// isWithin reports whether p is dir or lies below it.
func isWithin(p, dir string) bool {
	return p == dir || strings.HasPrefix(p, strings.TrimSuffix(dir, string(filepath.Separator))+string(filepath.Separator))
}

// message is r's message with the tree's path shown as v shows it, and
// without the leading path the item line already names.
func (v pathView) message(it machine.PlanItem, r *machine.Refusal) string {
	msg := r.Message
	if it.Path == "" {
		return msg
	}
	shown := v.relative(it.Path)
	if rest, ok := strings.CutPrefix(msg, it.Path+" "); ok {
		msg = rest
	}
	return machine.EscapeControl(strings.ReplaceAll(msg, it.Path, shown))
}

// renderPlan prints the human plan: the summary line, the removals, and
// the kept trees grouped by reason with one retry per group (a retry that
// differs from tree to tree is printed under each tree). verbose prints
// every item and every refusal instead of the groups.
func renderPlan(w io.Writer, plan machine.Plan, out string, v pathView, verbose bool) {
	if len(plan.Items) == 0 {
		fmt.Fprintln(w, "no worktrees to assess")
		return
	}
	s := summarize(plan)
	fmt.Fprintln(w, s.line())
	if verbose {
		renderPlanItems(w, plan)
	} else {
		renderRemovals(w, s, v)
		for _, g := range s.kept {
			renderKeptGroup(w, g, v)
		}
	}
	switch {
	case len(s.remove)+len(s.destroy)+len(s.settle) == 0:
	case out == stdoutPath:
		fmt.Fprintln(w, "next: save the plan printed on stdout to a file, review it, then: custody apply FILE")
	case out != "":
		fmt.Fprintf(w, "next: custody apply %s\n", machine.QuoteArg(out))
	default:
		fmt.Fprintln(w, "next: custody plan -o plan.json, review it, then: custody apply plan.json")
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

func renderRemovals(w io.Writer, s planSummary, v pathView) {
	if len(s.remove) > 0 {
		fmt.Fprintln(w, "to remove:")
		rows := [][]string{}
		for _, it := range sortedByPath(s.remove, v) {
			rows = append(rows, []string{"  " + v.show(it.Path), proofText(it)})
			for _, d := range it.Discarded {
				rows = append(rows, []string{"    discards " + d.Path + "/", fmt.Sprintf("%s, %s", d.Kind, byteSize(d.Bytes))})
			}
			if it.BranchKept != "" {
				// The branch custody did not create stays: said here,
				// before apply, so nobody counts on it going.
				rows = append(rows, []string{"    keeps branch " + it.Branch, it.BranchKept})
			}
		}
		table(w, rows)
	}
	if len(s.settle) > 0 {
		fmt.Fprintln(w, "to settle (deleted outside custody: nothing to remove, their resources destroyed):")
		rows := [][]string{}
		for _, it := range sortedByPath(s.settle, v) {
			rows = append(rows, []string{"  " + v.show(it.Path), settleText(it)})
		}
		table(w, rows)
	}
	if len(s.destroy) > 0 {
		fmt.Fprintln(w, "to destroy (orphaned resources: their worktree is gone):")
		for _, it := range s.destroy {
			fmt.Fprintf(w, "  %s\n", it.ID)
		}
	}
}

// renderKeptGroup prints one reason's kept trees: the reason with its
// retry, then one line per tree. When the trees' retries differ (each
// names its own path or branch), each tree's retry follows its line.
func renderKeptGroup(w io.Writer, g keptGroup, v pathView) {
	items := sortedByPath(g.items, v)
	retry, common := groupRetry(items)
	meaning := machine.Codes()[g.code]
	if meaning == "" {
		meaning = "kept"
	}
	if common {
		fmt.Fprintf(w, "kept [%s]: %s (%d)\n\tto retry: %s\n", g.code, meaning, len(items), retry)
	} else {
		fmt.Fprintf(w, "kept [%s] %s (%d), each with its own retry:\n", g.code, meaning, len(items))
	}
	rows := [][]string{}
	flush := func() {
		table(w, rows)
		rows = rows[:0]
	}
	for _, it := range items {
		rows = append(rows, []string{"  " + v.show(itemPath(it)), itemReason(it, v)})
		if !common {
			flush()
			fmt.Fprintf(w, "\tto retry: %s\n", retryOf(it.Refusal))
		}
	}
	flush()
}

// groupRetry is the retry every item shares, if they share one.
func groupRetry(items []machine.PlanItem) (string, bool) {
	retry := ""
	for i, it := range items {
		r := "custody plan"
		if it.Refusal != nil {
			r = retryOf(it.Refusal)
		}
		if i > 0 && r != retry {
			return "", false
		}
		retry = r
	}
	return retry, true
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
	msg := v.message(it, it.Refusal)
	var also []string
	for _, r := range it.Refusals {
		if r.Code != it.Refusal.Code && !containsCode(also, r.Code) {
			also = append(also, string(r.Code))
		}
	}
	if len(also) > 0 {
		msg += " (also " + strings.Join(also, ", ") + ")"
	}
	return msg
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
// item with its retry.
func renderPlanItems(w io.Writer, plan machine.Plan) {
	rows := [][]string{}
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
		rows = append(rows, []string{string(it.Action), it.ID, why})
	}
	table(w, rows)
	for _, it := range plan.Items {
		for _, r := range it.Refusals {
			writeRefusal(w, "kept "+it.ID, &r)
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
