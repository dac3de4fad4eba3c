// Package machine decides. It holds custody's kinds, states, triggers and
// guards (declared once with github.com/qmuntal/stateless), the observation
// values the guards read, proofs, refusals, plan items and fingerprints.
//
// Nothing in this package performs I/O: no exec, no filesystem, no clock.
// Time is a parameter. Callers (package steps) observe, ask machine to
// decide, persist what it decided (package store) and only then act.
//
// The caller's duties, in order, for every transition:
//  1. observe fresh (package observe) into a WorktreeObservation;
//  2. fire the trigger with a Firing; guards are evaluated over it;
//  3. the Commit callback persists the next record, its intent and its
//     journal entry in one transaction (this is the commit point);
//  4. act only after Fire returned nil, then observe again and fire the
//     completing trigger.
//go:generate go test -run TestDocsFresh -update

package machine
