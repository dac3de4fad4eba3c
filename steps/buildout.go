package steps

import (
	"fmt"

	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/observe"
)

// Disposable returns the [cleanup] disposable patterns of custody.toml when
// its exact content is approved (custody trust), and none otherwise: a
// pattern from an unapproved file never makes anything discardable.
//
// custody.toml is read again each time: a pattern withdrawn (or changed
// and approved) while a command runs counts from then on, so the
// quarantine of a later tree is judged by the file as it is now. A file
// that no longer parses makes nothing discardable.
func (e *Env) Disposable() (machine.Patterns, error) {
	cfg, src := e.Config, e.ConfigSource
	if e.Repo.MainCheckout != "" {
		if now, nowSrc, err := observe.ReadConfig(e.Repo); err != nil {
			return machine.Patterns{}, nil
		} else if nowSrc.Digest != src.Digest {
			cfg, src = now, nowSrc
		}
	}
	if len(cfg.Disposable) == 0 {
		return machine.Patterns{}, nil
	}
	ok, err := e.approvedDigest(src.Digest)
	if err != nil {
		return machine.Patterns{}, fmt.Errorf("read the approval of %s: %w", src.Path, err)
	}
	if !ok {
		return machine.Patterns{}, nil
	}
	return machine.ParsePatterns(cfg.Disposable)
}
