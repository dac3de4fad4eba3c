package land

import (
	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/steps"
	"github.com/custody-sh/custody/store"
)

// journal appends one land event of record id.
func journal(e *steps.Env, id, event string, in machine.LandIntent) error {
	return e.Store.AppendEvent(store.Event{Record: id, Kind: machine.KindWorktree, Event: event, At: e.Now().UTC(), Detail: in, Actor: e.Actor})
}
