package steps

import (
	"fmt"

	"github.com/custody-sh/custody/machine"
)

// disposable returns the [cleanup] disposable patterns of custody.toml when
// its exact content is approved (custody trust), and none otherwise: a
// pattern from an unapproved file never makes anything discardable.
func (e *Env) disposable() (machine.Patterns, error) {
	if len(e.Config.Disposable) == 0 {
		return machine.Patterns{}, nil
	}
	ok, err := e.approved()
	if err != nil {
		return machine.Patterns{}, fmt.Errorf("read the approval of %s: %w", e.ConfigSource.Path, err)
	}
	if !ok {
		return machine.Patterns{}, nil
	}
	return machine.ParsePatterns(e.Config.Disposable)
}
