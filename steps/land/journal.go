package land

import (
	"fmt"

	"github.com/custody-sh/custody/machine"
	json "github.com/custody-sh/custody/machine/bytejson"
	"github.com/custody-sh/custody/steps"
	"github.com/custody-sh/custody/store"
)

// landEvents reads record id's land events from the journal, oldest
// first, each with its intent.
func landEvents(e *steps.Env, id string) ([]string, []machine.LandIntent, error) {
	var events []string
	var intents []machine.LandIntent
	err := e.Store.Journal(id, func(_ []byte, en store.Entry) error {
		switch en.Event {
		case machine.EventLandIntent, machine.EventLanded, machine.EventLandAbandoned:
		default:
			return nil
		}
		var in machine.LandIntent
		if err := json.Unmarshal(en.Detail, &in); err != nil {
			return fmt.Errorf("journal entry %d (%s): %w", en.Seq, en.Event, err)
		}
		events, intents = append(events, en.Event), append(intents, in)
		return nil
	})
	return events, intents, err
}

// journal appends one land event of record id.
func journal(e *steps.Env, id, event string, in machine.LandIntent) error {
	return e.Store.AppendEvent(store.Event{Record: id, Kind: machine.KindWorktree, Event: event, At: e.Now().UTC(), Detail: in, Actor: e.Actor})
}
