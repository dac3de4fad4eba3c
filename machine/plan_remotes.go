package machine

import "slices"

// ProvingRemotes are the remotes apply must ask to carry out plan's
// removals and settlements: the remote of every item's proof, sorted and
// without repeats. It is nil, meaning every remote, when any such item
// rests on no remote's proof (a settlement nothing proved, whose apply
// must see again that every remote answered and none holds it; an
// archive's proof, whose commits apply looks for on the remotes first) or
// when there is no such item.
//
// Apply observes each tree afresh and requires its proof to hold now: a
// proof names the one remote whose advertisement held the work at plan,
// and asking that remote again is what re-proves it. A remote no item
// needs is not asked, so one that does not answer costs apply nothing;
// one an item needs and that does not answer keeps that item, naming it.
func ProvingRemotes(plan Plan) []string {
	var names []string
	for _, it := range plan.Items {
		if it.Action != ActionRemove && it.Action != ActionSettle {
			continue
		}
		p := it.Proof
		if it.Action == ActionSettle {
			p = nil
			if it.Settlement != nil && it.Settlement.Proven {
				p = it.Proof
			}
		}
		if p == nil || p.Remote == "" || p.Kind == ProofArchive {
			return nil
		}
		names = append(names, p.Remote)
	}
	slices.Sort(names)
	return slices.Compact(names)
}
