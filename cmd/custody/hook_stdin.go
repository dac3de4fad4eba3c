package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/custody-sh/custody/machine"
)

// hookReadTimeout bounds how long a hook waits for its payload: an agent
// that never closes stdin must not hold the hook.
const hookReadTimeout = 5 * time.Second

// readHookPayload reads and parses the payload on f: nothing from a
// terminal (a person running the hook by hand gives flags), at most
// machine.MaxHookPayload bytes, for at most hookReadTimeout.
func readHookPayload(f *os.File) (machine.HookPayload, error) {
	if f == nil || isTerminal(f) {
		return machine.HookPayload{}, nil
	}
	type read struct {
		b   []byte
		err error
	}
	done := make(chan read, 1)
	go func() {
		b, err := io.ReadAll(io.LimitReader(f, machine.MaxHookPayload+1))
		done <- read{b, err}
	}()
	select {
	case r := <-done:
		if r.err != nil && !errors.Is(r.err, os.ErrClosed) {
			return machine.HookPayload{}, fmt.Errorf("stdin cannot be read: %v", r.err)
		}
		if len(r.b) > machine.MaxHookPayload {
			return machine.HookPayload{}, fmt.Errorf("the payload on stdin is larger than %d bytes", machine.MaxHookPayload)
		}
		return machine.ParseHookPayload(r.b)
	case <-time.After(hookReadTimeout):
		return machine.HookPayload{}, fmt.Errorf("stdin was not closed within %s", hookReadTimeout)
	}
}
