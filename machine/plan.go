package machine

import (
	"errors"
	"fmt"
	"time"
)

// PlanFormat is the format tag of a plan file.
const PlanFormat = "custody.plan/1"

// MaxPlanBytes bounds the size of a plan file custody reads.
const MaxPlanBytes = 64 << 20

// ErrPlanInvalid is returned when a plan file is not a well-formed,
// unmodified custody.plan/1 document.
var ErrPlanInvalid = errors.New("invalid plan file")

// Plan is what `custody plan` reviewed. It carries what it was based on (the
// repository and each tree's fingerprint) so apply can refuse what changed.
type Plan struct {
	Format     string         `json:"format"`
	PlanID     string         `json:"plan_id"`
	Repository PlanRepository `json:"repository"`
	CreatedAt  time.Time      `json:"created_at"`
	Items      []PlanItem     `json:"items"`
}

// PlanRepository names the repository a plan belongs to.
type PlanRepository struct {
	ID        string `json:"id"`
	CommonDir string `json:"common_dir"`
}

// PlanItem is one record's verdict.
type PlanItem struct {
	ID     string `json:"id"`
	Kind   Kind   `json:"kind"`
	State  State  `json:"state"`
	Action Action `json:"action"`
	Path   string `json:"path"`
	Branch string `json:"branch,omitempty"`
	// BranchKept is set on a remove item whose branch stays when the tree
	// goes, saying why (BranchNotCreated: custody did not create it, so it
	// never deletes it); without it, a removal deletes the branch custody
	// created, by compare-and-swap on the commit it proved.
	BranchKept  string    `json:"branch_kept,omitempty"`
	Head        string    `json:"head,omitempty"`
	Proof       *Proof    `json:"proof,omitempty"`
	Fingerprint string    `json:"fingerprint,omitempty"`
	Refusal     *Refusal  `json:"refusal,omitempty"`
	Refusals    []Refusal `json:"refusals,omitempty"`
	// Discarded lists the build output a removal deletes with the tree,
	// each directory with its size.
	Discarded []DiscardedDir `json:"discarded,omitempty"`
	// Settlement is set on a settle item: what was proven of the vanished
	// tree's commits and what becomes of its branch.
	Settlement *Settlement `json:"settlement,omitempty"`
}

// Counts returns how many items act (remove, destroy, settle) and how many
// keep.
func (p Plan) Counts() (remove, keep int) {
	for _, it := range p.Items {
		if it.Action == ActionRemove || it.Action == ActionDestroy || it.Action == ActionSettle {
			remove++
		} else {
			keep++
		}
	}
	return remove, keep
}

// Pending reports whether the plan keeps something a person should act on
// (exit 3): every kept item but the benign ones (Code.Benign: active work,
// trees custody does not own, records another invocation acts on).
func (p Plan) Pending() bool {
	for _, it := range p.Items {
		if it.Action == ActionKeep && ItemPending(OutcomeKept, it.Refusal) {
			return true
		}
	}
	return false
}

// Seal sets Format and PlanID: the sha256 of the canonical body (the plan
// with an empty plan_id).
func Seal(p Plan) Plan {
	p.Format = PlanFormat
	p.PlanID = planID(p)
	return p
}

func planID(p Plan) string {
	p.PlanID = ""
	return bodyDigest(p, "plan")
}

// ParsePlan reads a plan file strictly: known fields only, the right format,
// a plan_id equal to the digest of its body (so an edited plan is refused),
// unique item ids, known actions, and a fingerprint and proof on every
// removal. Every failure wraps ErrPlanInvalid and names what is wrong.
func ParsePlan(b []byte) (Plan, error) {
	p, err := decodeStrict[Plan](b, "plan")
	if err != nil {
		return Plan{}, err
	}
	if p.Format != PlanFormat {
		return Plan{}, fmt.Errorf("%w: format %q, want %q", ErrPlanInvalid, p.Format, PlanFormat)
	}
	if want := planID(p); p.PlanID != want {
		return Plan{}, fmt.Errorf("%w: plan_id %q does not match its body (%s); the file was changed after plan wrote it", ErrPlanInvalid, p.PlanID, want)
	}
	if p.Repository.ID == "" {
		return Plan{}, fmt.Errorf("%w: no repository id", ErrPlanInvalid)
	}
	seen := map[string]bool{}
	for i, it := range p.Items {
		if it.ID == "" {
			return Plan{}, fmt.Errorf("%w: item %d has no id", ErrPlanInvalid, i)
		}
		if seen[it.ID] {
			return Plan{}, fmt.Errorf("%w: item %s appears twice", ErrPlanInvalid, it.ID)
		}
		seen[it.ID] = true
		switch it.Action {
		case ActionKeep:
		case ActionRemove:
			if it.Fingerprint == "" || it.Proof == nil || !IsFullCommit(it.Head) || !it.Proof.Covers(it.Head) {
				return Plan{}, fmt.Errorf("%w: item %s removes without a fingerprint and a proof of its HEAD", ErrPlanInvalid, it.ID)
			}
		case ActionSettle:
			if it.Fingerprint == "" || it.Settlement == nil || !IsFullCommit(it.Settlement.Head) ||
				it.Settlement.Proven != it.Proof.Covers(it.Settlement.Head) {
				return Plan{}, fmt.Errorf("%w: item %s settles without a fingerprint and a settlement that its proof matches", ErrPlanInvalid, it.ID)
			}
		case ActionDestroy:
			if it.Kind != KindResource || it.Fingerprint == "" {
				return Plan{}, fmt.Errorf("%w: item %s destroys without being a resource with a fingerprint", ErrPlanInvalid, it.ID)
			}
		default:
			return Plan{}, fmt.Errorf("%w: item %s has unknown action %q", ErrPlanInvalid, it.ID, it.Action)
		}
	}
	return p, nil
}

// Item returns the plan's item with id.
func (p Plan) Item(id string) (PlanItem, bool) {
	for _, it := range p.Items {
		if it.ID == id {
			return it, true
		}
	}
	return PlanItem{}, false
}
