package custody

import (
	"errors"
	"fmt"
	"strings"
)

// ErrStale is matched (errors.Is) by the error Apply returns when a tree
// changed since the plan was made: what was reviewed is not what is
// there, so that tree was kept as it is.
var ErrStale = errors.New("custody: the plan is stale")

// StaleError is returned by Apply when one or more of the plan's trees
// changed since plan: those items were not touched (the other items went
// on, and Apply's result says what each one did). Plan again, review, and
// apply the new plan.
//
// It matches errors.Is(err, ErrStale) and errors.Is(err,
// machine.CodeStale.AsError()), and errors.As finds each item's *Refusal.
type StaleError struct {
	// PlanID is the plan's id.
	PlanID string
	// Items are the stale items, each with its refusal (code stale),
	// which names the tree's path and what changed.
	Items []Outcome
}

// Error names each stale tree and the command that retries.
func (e *StaleError) Error() string {
	ids := make([]string, len(e.Items))
	for i, it := range e.Items {
		ids[i] = it.ID
	}
	return fmt.Sprintf("plan %s is stale: changed since plan, so kept as they are: %s\n\tto retry: custody plan, review it, and apply the new plan",
		e.PlanID, strings.Join(ids, ", "))
}

// Is reports whether target is ErrStale.
func (e *StaleError) Is(target error) bool { return target == ErrStale }

// Unwrap returns each stale item's refusal.
func (e *StaleError) Unwrap() []error {
	var errs []error
	for _, it := range e.Items {
		if it.Refusal != nil {
			errs = append(errs, it.Refusal)
		}
	}
	return errs
}
