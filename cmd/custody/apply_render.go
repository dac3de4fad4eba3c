package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/steps"
)

// renderApply prints what apply did, item by item: each tree removed (its
// id and path), the branch it deleted with the commit the branch pointed at
// (so it can be made again), or why the branch was kept, and every recovery
// ref it wrote; a refused item as its refusal with the retry. It ends with
// one line of counts. Paths and retries are as v shows them, outcomes
// coloured by pal.
func renderApply(w io.Writer, res steps.ApplyResult, plan machine.Plan, v pathView, pal palette) {
	counts := map[machine.Outcome]int{}
	var order []machine.Outcome
	for _, it := range res.Items {
		if counts[it.Outcome] == 0 {
			order = append(order, it.Outcome)
		}
		counts[it.Outcome]++
		tree := ""
		if pi, ok := plan.Item(it.ID); ok && pi.Kind != machine.KindResource {
			tree = pi.Path
		}
		if it.Refusal != nil {
			writeRefusalAs(w, pal.outcome(it.Outcome), it.ID, v.refusal(tree, *it.Refusal))
		} else {
			where := ""
			if tree != "" {
				where = " (" + v.show(tree) + ")"
			}
			// The outcome is custody's word, coloured: written as it is.
			io.WriteString(w, pal.outcome(it.Outcome)+" ")
			sayf(w, "%s%s\n", it.ID, where)
		}
		if b := it.Branch; b != nil {
			switch b.Outcome {
			case machine.BranchDeleted:
				sayf(w, "  deleted branch %s (was %s)\n", b.Name, machine.Abbrev(b.Commit, machine.QuotedCommit))
			case machine.BranchKept:
				sayf(w, "  kept branch %s: %s\n", b.Name, b.Reason)
			default:
				sayf(w, "  branch %s: %s\n", b.Name, orDash(b.Reason))
			}
		}
		for _, r := range it.Recovered {
			sayf(w, "  wrote %s\n", r.Ref)
		}
		for _, r := range it.Resources {
			if r.Refusal != nil {
				writeRefusalAs(w, pal.outcome(r.Outcome), r.ID, v.refusal("", *r.Refusal))
			}
		}
	}
	// An interrupted apply says what it left in its one line on stderr
	// (interruptNote); here is only what it did.
	if len(res.Items) == 0 && res.Interrupted == "" {
		fmt.Fprintln(w, "the plan removes nothing")
	}
	if len(res.Items) > 0 {
		parts := make([]string, len(order))
		for i, o := range order {
			parts[i] = fmt.Sprintf("%d %s", counts[o], o)
		}
		line := strings.Join(parts, ", ")
		if res.Kept > 0 {
			line += fmt.Sprintf("; the plan keeps %d", res.Kept)
		}
		fmt.Fprintln(w, line)
	}
}
