package machine

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"time"

	"github.com/qmuntal/stateless"

	json "github.com/custody-sh/custody/machine/bytejson"
)

// Triggers of the resource machine (DESIGN §4, issue texts).
const (
	// TriggerDeclare records a resource with its frozen create and destroy
	// commands as the create intent, before create runs.
	TriggerDeclare Trigger = "declare"
	// TriggerCreateFailed records a create that failed after its retries;
	// the entry stays in the ledger so its destroy still runs.
	TriggerCreateFailed Trigger = "create-failed"
	// TriggerTeardown commits the destroy intent before destroy runs.
	TriggerTeardown Trigger = "teardown"
	// TriggerDestroyed records a destroy that exited 0.
	TriggerDestroyed Trigger = "destroyed"
	// TriggerDestroyFailed records a destroy that failed; the entry stays in
	// the ledger for orphan GC.
	TriggerDestroyFailed Trigger = "destroy-failed"
	// TriggerEnsure records an ensure run: an internal step of active.
	TriggerEnsure Trigger = "ensure"
	// TriggerStarted records, in the create or destroy intent, the process
	// group of the command that just started, so a resume after custody
	// was killed ends that group before it undoes or redoes the command.
	TriggerStarted Trigger = "started"
)

// Resource is one per-worktree external resource in the ledger: the frozen,
// fully expanded commands, its handle and its lifecycle state.
type Resource struct {
	// ID is "<worktree id>/<name>".
	ID       string `json:"id"`
	Worktree string `json:"worktree"`
	// AdminKey is the worktree's git admin key, GC's liveness key.
	AdminKey string `json:"admin_key"`
	Path     string `json:"path"`
	Name     string `json:"name"`
	Handle   string `json:"handle"`
	State    State  `json:"state"`
	Create   string `json:"create"`
	Destroy  string `json:"destroy"`
	Ensure   string `json:"ensure,omitempty"`
	// Env is the environment frozen with the commands: each @token@'s
	// value under TokenEnv(token), which the frozen text references
	// instead of holding the value (Freeze). Entries frozen before tokens
	// became references have none: their values are in the text.
	Env      map[string]string `json:"env,omitempty"`
	Required bool              `json:"required"`
	Retries  int               `json:"retries"`
	GC       bool              `json:"gc"`
	Timeout  time.Duration     `json:"timeout"`
	Rev      uint64            `json:"rev"`
	// Intent is the create or destroy intent being carried out.
	Intent    *ResourceIntent  `json:"intent,omitempty"`
	Evidence  ResourceEvidence `json:"evidence"`
	CreatedAt time.Time        `json:"created_at"`
	UpdatedAt time.Time        `json:"updated_at"`
}

// ResourceIntent is committed before a resource command runs.
type ResourceIntent struct {
	Kind    IntentKind `json:"kind"`
	Command string     `json:"command"`
	Holder  Holder     `json:"holder"`
	At      time.Time  `json:"at"`
	// Group is the process group of the command running under this intent
	// (PID is the group id, its leader's pid; Start the leader's start
	// time, as in Holder), recorded once the command started. Resume ends
	// a group that outlived a killed custody before it acts.
	Group *Holder `json:"group,omitempty"`
}

// Intent kinds of resources.
const (
	IntentResourceCreate  IntentKind = "resource-create"
	IntentResourceDestroy IntentKind = "resource-destroy"
)

// ResourceEvidence is what the resource's commands did.
type ResourceEvidence struct {
	Outcome  string `json:"outcome,omitempty"`
	ExitCode int    `json:"exit_code"`
	Attempts int    `json:"attempts,omitempty"`
	Output   string `json:"output,omitempty"`
}

// ResourceFiring is the argument of every resource trigger.
type ResourceFiring struct {
	Res    Resource
	Now    time.Time
	Intent *ResourceIntent
	// Ran, ExitCode and Output describe the command that just ran.
	Ran      bool
	ExitCode int
	Attempts int
	Output   string
}

func resourceFiringOf(args []any) (ResourceFiring, bool) {
	if len(args) != 1 {
		return ResourceFiring{}, false
	}
	f, ok := args[0].(ResourceFiring)
	return f, ok
}

// commandsFrozen holds when the intent's command and the frozen destroy
// command carry no @token@: a half-expanded command is never run.
func commandsFrozen(_ context.Context, args ...any) bool {
	f, ok := resourceFiringOf(args)
	return ok && f.Intent != nil && strings.TrimSpace(f.Intent.Command) != "" &&
		Unexpanded(f.Intent.Command) == "" && Unexpanded(f.Res.Destroy) == "" && Unexpanded(f.Res.Create) == ""
}

// commandSucceeded holds when the command ran and exited 0.
func commandSucceeded(_ context.Context, args ...any) bool {
	f, ok := resourceFiringOf(args)
	return ok && f.Ran && f.ExitCode == 0
}

// commandFailed holds when the command ran (all its attempts) and failed.
func commandFailed(_ context.Context, args ...any) bool {
	f, ok := resourceFiringOf(args)
	return ok && f.Ran && f.ExitCode != 0
}

// resourceIntentHeld holds when the entry carries an intent and the firing
// hands the same command to a new holder.
func resourceIntentHeld(_ context.Context, args ...any) bool {
	f, ok := resourceFiringOf(args)
	return ok && f.Res.Intent != nil && f.Intent != nil && f.Res.Intent.Kind == f.Intent.Kind && f.Res.Intent.Command == f.Intent.Command
}

// groupRecorded holds when the firing hands the entry's intent, unchanged
// but for the process group of its started command, back to the entry.
func groupRecorded(_ context.Context, args ...any) bool {
	f, ok := resourceFiringOf(args)
	if !ok || f.Res.Intent == nil || f.Intent == nil || f.Intent.Group == nil || f.Intent.Group.PID <= 0 {
		return false
	}
	a, b := *f.Res.Intent, *f.Intent
	a.Group, b.Group = nil, nil
	return a == b
}

// commandRan holds when a command ran, whatever it exited.
func commandRan(_ context.Context, args ...any) bool {
	f, ok := resourceFiringOf(args)
	return ok && f.Ran
}

// ResourceCommit persists one resource transition (the commit point).
type ResourceCommit = CommitFunc[ResourceFiring]

// ResourceMachine is the state machine of one ledger entry.
type ResourceMachine = Machine[Resource, ResourceFiring]

// ResourceSpecMachine is the resource kind's machine (DESIGN §4).
func ResourceSpecMachine() Spec[Resource] {
	return Spec[Resource]{Kind: KindResource, Configure: configureResource, Noun: "resource ",
		Retry: func(Resource) string { return "custody resource list" }}
}

// NewResourceMachine returns the machine of r.
func NewResourceMachine(r Resource, commit ResourceCommit) *ResourceMachine {
	return NewMachine(ResourceSpecMachine(), r, commit)
}

func configureResource(sm *stateless.StateMachine) {
	sm.Configure(StateNone).
		Permit(TriggerDeclare, StateProvisioning, commandsFrozen)
	sm.Configure(StateProvisioning).
		PermitReentry(TriggerTakeOver, resourceIntentHeld).
		PermitReentry(TriggerStarted, groupRecorded).
		Permit(TriggerCreated, StateActive, commandSucceeded).
		Permit(TriggerCreateFailed, StateFinished, commandFailed).
		Permit(TriggerTeardown, StateRemoving, commandsFrozen)
	sm.Configure(StateActive).
		PermitReentry(TriggerEnsure, commandRan).
		Permit(TriggerTeardown, StateRemoving, commandsFrozen)
	sm.Configure(StateFinished).
		Permit(TriggerTeardown, StateRemoving, commandsFrozen)
	sm.Configure(StateRemoving).
		PermitReentry(TriggerTakeOver, resourceIntentHeld).
		PermitReentry(TriggerStarted, groupRecorded).
		Permit(TriggerDestroyed, StateTombstoned, commandSucceeded).
		Permit(TriggerDestroyFailed, StateFinished, commandFailed)
	sm.Configure(StateTombstoned)
}

// ResourceGraph returns the resource machine as a DOT graph, for docs/.
func ResourceGraph() string { return Graph(ResourceSpecMachine()) }

// RowKind is KindResource.
func (r Resource) RowKind() Kind { return KindResource }

// RowID is the entry's id, "<worktree id>/<name>".
func (r Resource) RowID() string { return r.ID }

// RowState is the entry's state.
func (r Resource) RowState() State { return r.State }

// RowRev is the entry's revision.
func (r Resource) RowRev() uint64 { return r.Rev }

// RowPath is the path of the entry's worktree.
func (r Resource) RowPath() string { return r.Path }

// RowIntent returns the kind and holder of the entry's intent.
func (r Resource) RowIntent() (IntentKind, Holder, bool) {
	if r.Intent == nil {
		return "", Holder{}, false
	}
	return r.Intent.Kind, r.Intent.Holder, true
}

// RowIntentAt is when the entry's intent was committed (zero for none).
func (r Resource) RowIntentAt() time.Time {
	if r.Intent == nil {
		return time.Time{}
	}
	return r.Intent.At
}

// NextResource returns the ledger entry after r takes t to state `to`.
func NextResource(r Resource, to State, t Trigger, f ResourceFiring) Resource {
	n := r
	n.State = to
	n.Rev = r.Rev + 1
	n.UpdatedAt = f.Now
	switch t {
	case TriggerDeclare:
		n.CreatedAt = f.Now
		n.Intent = copyResourceIntent(f.Intent)
	case TriggerTeardown, TriggerTakeOver, TriggerStarted:
		n.Intent = copyResourceIntent(f.Intent)
	case TriggerCreated, TriggerCreateFailed, TriggerDestroyed, TriggerDestroyFailed, TriggerEnsure:
		n.Intent = nil
		n.Evidence = ResourceEvidence{Outcome: string(t), ExitCode: f.ExitCode, Attempts: f.Attempts, Output: f.Output}
	default:
		panic(fmt.Sprintf("machine: no ledger change declared for resource trigger %q", t))
	}
	return n
}

func copyResourceIntent(in *ResourceIntent) *ResourceIntent {
	if in == nil {
		return nil
	}
	c := *in
	if in.Group != nil {
		g := *in.Group
		c.Group = &g
	}
	return &c
}

// ResourceFingerprint digests what a plan reviewed of a ledger entry: apply
// refuses the destroy if the entry changed since.
func ResourceFingerprint(r Resource) string {
	b, err := json.Marshal(struct {
		ID, Handle, Destroy, AdminKey, Path string
		State                               State
		Rev                                 uint64
		Env                                 map[string]string `json:",omitempty"`
	}{r.ID, r.Handle, r.Destroy, r.AdminKey, r.Path, r.State, r.Rev, r.Env})
	if err != nil {
		panic("machine: resource fingerprint does not marshal: " + err.Error())
	}
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}
