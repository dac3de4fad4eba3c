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
	b, closed, err := readWithin(f, machine.MaxHookPayload+1, hookReadTimeout)
	if !closed {
		return machine.HookPayload{}, fmt.Errorf("stdin was not closed within %s", hookReadTimeout)
	}
	if err != nil && !errors.Is(err, os.ErrClosed) {
		return machine.HookPayload{}, fmt.Errorf("stdin cannot be read: %v", err)
	}
	if len(b) > machine.MaxHookPayload {
		return machine.HookPayload{}, fmt.Errorf("the payload on stdin is larger than %d bytes", machine.MaxHookPayload)
	}
	return machine.ParseHookPayload(b)
}

// readAllWithin is have followed by io.ReadAll of f, at most limit bytes
// in all, read on a goroutine and waited for at most d: closed is false
// when f reached neither its end nor limit (nor an error) in time, and the
// read is then left running.
func readAllWithin(f *os.File, have []byte, limit int, d time.Duration) (b []byte, closed bool, err error) {
	type read struct {
		b   []byte
		err error
	}
	done := make(chan read, 1)
	go func() {
		b, err := io.ReadAll(io.LimitReader(f, int64(limit-len(have))))
		done <- read{append(have, b...), err}
	}()
	select {
	case r := <-done:
		return r.b, true, r.err
	case <-time.After(d):
		return nil, false, nil
	}
}
