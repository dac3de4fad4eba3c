package machine_test

import (
	"context"
	"strings"
	"testing"

	"github.com/custody-sh/custody/machine"
)

// srcObs and dstObs are observations of a relocation's source and
// destination: registered (git reports the path) or not.
func srcObs(registered bool) machine.WorktreeObservation {
	o := removableObs()
	if !registered {
		o = absentObs()
	}
	return o
}

func dstObs(registered bool, head string) *machine.WorktreeObservation {
	o := absentObs()
	o.Path = destPath
	if registered {
		o = removableObs()
		o.Path, o.Head = destPath, head
	}
	return &o
}

// TestDecideResumeRelocation covers DESIGN §4's relocating rule: git
// reports only dst → complete; only src → step back; both →
// ambiguous-relocation; anything else fits no rule.
func TestDecideResumeRelocation(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		src  machine.WorktreeObservation
		dst  *machine.WorktreeObservation
		want machine.ResumeAction
		code machine.Code
		msg  string
	}{
		{name: "only-destination", src: srcObs(false), dst: dstObs(true, headCommit), want: machine.ResumeCompleteRelocation},
		{name: "only-source", src: srcObs(true), dst: dstObs(false, ""), want: machine.ResumeStepBack},
		{name: "both", src: srcObs(true), dst: dstObs(true, headCommit), code: machine.CodeAmbiguousRelocation, msg: "git reports both"},
		{name: "neither", src: srcObs(false), dst: dstObs(false, ""), code: machine.CodeResumeUnmatched, msg: "destination: path absent"},
		{name: "destination-moved-on", src: srcObs(false), dst: dstObs(true, baseCommit), code: machine.CodeResumeUnmatched, msg: "HEAD " + baseCommit[:12]},
		{name: "source-moved-on", src: withObs(srcObs(true), func(o *machine.WorktreeObservation) { o.Head = baseCommit }),
			dst: dstObs(false, ""), code: machine.CodeResumeUnmatched, msg: "source: path present"},
		{name: "source-left-behind", src: withObs(srcObs(false), func(o *machine.WorktreeObservation) { o.PathState = machine.PathPresent }),
			dst: dstObs(true, headCommit), code: machine.CodeResumeUnmatched, msg: "source: path present"},
		{name: "destination-under-another-key", src: srcObs(false),
			dst: func() *machine.WorktreeObservation { o := dstObs(true, headCommit); o.AdminKey = "other"; return o }(), code: machine.CodeResumeUnmatched, msg: "registered as other"},
		{name: "destination-not-observed", src: srcObs(true), dst: nil, code: machine.CodeResumeUnmatched, msg: "could not be observed"},
		{name: "destination-unknown", src: srcObs(true),
			dst:  func() *machine.WorktreeObservation { o := absentObs(); o.PathState = machine.PathUnknown; return &o }(),
			code: machine.CodeResumeUnmatched, msg: "could not be observed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, ref := machine.DecideResume(relocatingRecord(), tt.src, tt.dst)
			if tt.code == "" {
				if ref != nil || got != tt.want {
					t.Fatalf("DecideResume = %q, %v; want %q", got, ref, tt.want)
				}
				return
			}
			if ref == nil || ref.Code != tt.code || got != "" {
				t.Fatalf("DecideResume = %q, %v; want refusal %s", got, ref, tt.code)
			}
			if !strings.Contains(ref.Message, tt.msg) || ref.Retry == "" {
				t.Errorf("refusal %q (retry %q) does not say %q and retry", ref.Message, ref.Retry, tt.msg)
			}
		})
	}
}

// TestRelocationResumeFires checks that each relocation decision is a
// transition the machine permits over the same observations, and that the
// record ends where the decision says: at the destination, or back at the
// source, with no intent.
func TestRelocationResumeFires(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		trigger  machine.Trigger
		src      machine.WorktreeObservation
		dst      *machine.WorktreeObservation
		wantPath string
	}{
		{machine.TriggerRelocated, srcObs(false), dstObs(true, headCommit), destPath},
		{machine.TriggerStepBack, srcObs(true), dstObs(false, ""), testPath},
	} {
		rec := relocatingRecord()
		var got machine.Record
		w := machine.NewWorktree(rec, func(_ context.Context, _, to machine.State, tr machine.Trigger, f machine.Firing) error {
			got = machine.Next(rec, to, tr, f)
			return nil
		})
		f := machine.Firing{Record: rec, Obs: tt.src, Dest: tt.dst, Now: testNow}
		other := map[machine.Trigger]machine.Trigger{machine.TriggerRelocated: machine.TriggerStepBack, machine.TriggerStepBack: machine.TriggerRelocated}[tt.trigger]
		for _, p := range w.Permitted(context.Background(), f) {
			if p == other {
				t.Errorf("%s: %s is permitted too; the relocation guards must exclude each other", tt.trigger, other)
			}
		}
		if err := w.Fire(context.Background(), tt.trigger, f); err != nil {
			t.Fatalf("%s: %v", tt.trigger, err)
		}
		if got.State != machine.StateActive || got.Path != tt.wantPath || got.Intent != nil {
			t.Errorf("%s: record is %s at %s with intent %v, want active at %s and no intent", tt.trigger, got.State, got.Path, got.Intent, tt.wantPath)
		}
	}
}
