package resource

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/observe/hostio"
	"github.com/custody-sh/custody/steps"
	"github.com/custody-sh/custody/steps/failpoint"
	"github.com/custody-sh/custody/store"
)

// tokens returns the values of the @token@s a resource command may use:
// custody's own and discern's @db@, @site@ and @worktree@
// (machine.LegacyTokens).
func tokens(e *steps.Env, rec machine.Record, name string) map[string]string {
	h := machine.Handle(e.Config.Slug, rec.ID, name)
	vals := machine.LegacyTokens(e.Config.Slug, rec.ID)
	for k, v := range map[string]string{
		"resource": h, "resource_ident": machine.Ident(h), "id": rec.ID, "dir": rec.Path,
		"branch": rec.Branch, "port": strconv.Itoa(rec.Port), "slug": e.Config.Slug, "repo": e.Repo.MainCheckout,
	} {
		vals[k] = v
	}
	return vals
}

// maxResourceOutput bounds the command output kept in the ledger and journal.
const maxResourceOutput = 4 << 10

// runResourceCommand runs one frozen command through `sh -c` on the one
// runner (own process group, the resource's timeout, bounded output). A
// command that still carries an @token@ is refused, never run.
//
// A command that a killed custody left running under r's intent (its
// process group is recorded there) is ended first (endGroup), so the two
// never run alongside; if it cannot be ended, cmd does not run. onStart,
// when set, is called with the new command's process group before it is
// waited for (recordGroup).
func runResourceCommand(ctx context.Context, e *steps.Env, r machine.Resource, cmd string, onStart func(int) error) (int, string) {
	return runCommandOn(ctx, e.Holder.Host, e.Repo.MainCheckout, r, cmd, onStart)
}

// runCommandOn is runResourceCommand on host, in r's tree or, when that is
// not a directory, in fallback: it needs no repository, so custody
// resource gc --gone-repos runs a gone repository's destroys with it.
func runCommandOn(ctx context.Context, host, fallback string, r machine.Resource, cmd string, onStart func(int) error) (int, string) {
	if tok := machine.Unexpanded(cmd); tok != "" {
		return -1, "refused: the frozen command still carries " + tok
	}
	if err := endGroupOn(host, r); err != nil {
		return -1, "refused: " + err.Error()
	}
	dir := r.Path
	if fi, err := os.Lstat(dir); err != nil || !fi.IsDir() {
		dir = fallback
	}
	timeout := r.Timeout
	if timeout <= 0 {
		timeout = machine.DefaultResourceTimeout
	}
	// An interrupt (Ctrl-C, SIGTERM, the SIGHUP of a closed terminal) ends
	// the command's whole process group at once. Its outcome is then never
	// recorded (interruptedResource): the intent stays, and custody resume
	// undoes and redoes it, so nothing of it runs alongside the redo.
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	runner := &hostio.Runner{Env: hostio.CleanEnv(), Grace: 2 * time.Second, MaxOutput: 1 << 20, Truncate: true}
	res, err := runner.Run(cctx, hostio.Cmd{Dir: dir, Args: []string{"/bin/sh", "-c", cmd}, Env: resourceEnv(r), OnStart: onStart})
	out := string(res.Stdout) + string(res.Stderr)
	code := res.ExitCode
	var te *hostio.TimeoutError
	if errors.As(err, &te) {
		// The time it had is the resource's timeout, counted from before
		// what an earlier run left was ended: say that one.
		te.After = timeout
	}
	if err != nil {
		var ee *hostio.ExitError
		if !errors.As(err, &ee) {
			code = -1
			out += "\n" + err.Error()
		}
	}
	out = machine.RedactCredentials(out)
	if len(out) > maxResourceOutput {
		out = out[:maxResourceOutput] + "\n[output truncated]"
	}
	return code, strings.TrimSpace(out)
}

// resourceEnv is the environment of r's commands: the entry's own names,
// then the values its frozen commands reference (r.Env, sorted), which win
// over any earlier variable of the same name.
func resourceEnv(r machine.Resource) []string {
	var vals []string
	for k, v := range r.Env {
		vals = append(vals, k+"="+v)
	}
	sort.Strings(vals)
	return append([]string{"CUSTODY_WORKTREE_ID=" + r.Worktree, "CUSTODY_RESOURCE=" + r.Handle, "CUSTODY_RESOURCE_NAME=" + r.Name}, vals...)
}

// interruptedResource is the error of a resource command an interrupt
// ended (ctx is done): its outcome is unknown, so none is recorded and r's
// intent is left for custody resume.
func interruptedResource(ctx context.Context, r machine.Resource, what string) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("the %s of resource %s was interrupted and its process group ended; its intent is left for custody resume: %w", what, r.ID, err)
	}
	return nil
}

// runWithRetries runs cmd up to 1+retries times until it exits 0. When r
// carries an intent, each attempt's process group is committed into it
// (recordGroup) and *r follows the store.
func runWithRetries(ctx context.Context, e *steps.Env, r *machine.Resource, cmd string) (code, attempts int, out string) {
	for attempts = 1; ; attempts++ {
		var hook func(int) error
		if r.Intent != nil {
			hook = recordGroup(ctx, e, r)
		}
		code, out = runResourceCommand(ctx, e, *r, cmd, hook)
		if code == 0 || attempts > r.Retries || ctx.Err() != nil || machine.Unexpanded(cmd) != "" {
			return code, attempts, out
		}
	}
}

// declareResource freezes spec's commands for rec and commits the create
// intent. A command left with an @token@, or one whose token stands where
// its value would be read as code, is refused here.
func declareResource(ctx context.Context, e *steps.Env, rec machine.Record, spec machine.ResourceSpec) (machine.Resource, error) {
	vals := tokens(e, rec, spec.Name)
	r := machine.Resource{ID: rec.ID + "/" + spec.Name, Worktree: rec.ID, AdminKey: rec.AdminKey, Path: rec.Path,
		Name: spec.Name, Handle: vals["resource"], Env: machine.TokenEnvOf(vals),
		Required: spec.Required, Retries: spec.Retries, GC: spec.GC, Timeout: spec.Timeout}
	if err := freezeSpec(&r, spec, vals, filepath.Join(e.Repo.MainCheckout, machine.ConfigFile)); err != nil {
		return r, err
	}
	in := &machine.ResourceIntent{Kind: machine.IntentResourceCreate, Command: r.Create, Holder: e.Holder, At: e.Now().UTC()}
	// The frozen destroy is mirrored to the user-level ledger before the
	// create intent commits (decision 0256): a create can run only once
	// the record of how to undo it outlives the repository. A kill
	// between the two leaves a mirror of an entry never committed, which
	// custody resource gc removes (syncMirrors).
	mirrored := r
	mirrored.State, mirrored.Intent, mirrored.CreatedAt = machine.StateProvisioning, in, in.At
	if err := writeMirror(e, mirrored); err != nil {
		return r, err
	}
	failpoint.At("resource/after-mirror")
	return fireResource(ctx, e, r, machine.TriggerDeclare, machine.ResourceFiring{Intent: in}, "create intent")
}

// freezeSpec freezes spec's create, destroy and ensure into r
// (machine.Freeze: tokens become references to r.Env). A token custody does
// not know (unexpanded-token) or one that stands where its value would be
// read as code (unsafe-token) is a *machine.Refusal naming config.
func freezeSpec(r *machine.Resource, spec machine.ResourceSpec, vals map[string]string, config string) error {
	for _, c := range []struct {
		tmpl string
		dst  *string
		what string
	}{{spec.Create, &r.Create, "create"}, {spec.Destroy, &r.Destroy, "destroy"}, {spec.Ensure, &r.Ensure, "ensure"}} {
		for _, tok := range machine.Tokens(c.tmpl) {
			if _, ok := vals[tok]; !ok {
				return machine.UnexpandedTokenRefusal(config, spec.Name, tok)
			}
		}
		frozen, err := machine.Freeze(c.tmpl, vals)
		var ute *machine.UnsafeTokenError
		if errors.As(err, &ute) {
			return machine.UnsafeTokenRefusal(config, spec.Name, c.what, ute)
		}
		if err != nil {
			return fmt.Errorf("freeze the %s command of resource %s: %w", c.what, spec.Name, err)
		}
		*c.dst = frozen
	}
	return nil
}

// createResource runs a declared resource's create (with retries) and
// records the outcome.
func createResource(ctx context.Context, e *steps.Env, r machine.Resource) (machine.Resource, error) {
	code, attempts, out := runWithRetries(ctx, e, &r, r.Create)
	if err := interruptedResource(ctx, r, "create"); err != nil {
		return r, err
	}
	t := machine.TriggerCreated
	if code != 0 {
		t = machine.TriggerCreateFailed
	}
	return fireResource(ctx, e, r, t, machine.ResourceFiring{Ran: true, ExitCode: code, Attempts: attempts, Output: out},
		fmt.Sprintf("%s (exit %d): %s", t, code, out))
}

// destroyResource commits the destroy intent, runs the frozen destroy and
// records the outcome. A failed destroy leaves the entry for orphan GC.
func destroyResource(ctx context.Context, e *steps.Env, r machine.Resource) (machine.Resource, error) {
	// A create a killed custody left running ends before its destroy is
	// committed (the new intent no longer names its group).
	if err := endGroup(e, r); err != nil {
		return r, machine.GroupRunningRefusal(r.Path, err)
	}
	if r.State != machine.StateRemoving {
		in := &machine.ResourceIntent{Kind: machine.IntentResourceDestroy, Command: r.Destroy, Holder: e.Holder, At: e.Now().UTC()}
		var err error
		if r, err = fireResource(ctx, e, r, machine.TriggerTeardown, machine.ResourceFiring{Intent: in}, "destroy intent"); err != nil {
			return r, err
		}
		failpoint.At("resource/after-destroy-intent")
	}
	code, attempts, out := runWithRetries(ctx, e, &r, r.Destroy)
	if err := interruptedResource(ctx, r, "destroy"); err != nil {
		return r, err
	}
	t := machine.TriggerDestroyed
	if code != 0 {
		t = machine.TriggerDestroyFailed
	}
	r, err := fireResource(ctx, e, r, t, machine.ResourceFiring{Ran: true, ExitCode: code, Attempts: attempts, Output: out},
		fmt.Sprintf("%s (exit %d): %s", t, code, out))
	if err == nil && r.State == machine.StateTombstoned {
		// The destroy is settled: its mirror goes. A mirror a failure
		// leaves here names a destroyed entry, which custody resource gc
		// removes (syncMirrors); it is never run while the repository
		// exists.
		_ = removeMirror(e, r.ID)
	}
	return r, err
}

// provisionResources creates every declared resource of rec that has no
// live ledger entry yet, in document order, and re-drives entries an
// interrupted run left with a create intent. It returns the outcomes and,
// when a required resource failed, a refusal: the caller rolls back.
func provisionResources(ctx context.Context, e *steps.Env, rec machine.Record) ([]steps.ResourceOutcome, *machine.Refusal, error) {
	have, err := e.LiveResources(rec.ID)
	if err != nil {
		return nil, nil, err
	}
	byName := map[string]machine.Resource{}
	for _, r := range have {
		byName[r.Name] = r
	}
	var outs []steps.ResourceOutcome
	for _, spec := range e.Config.Resources {
		if err := ctx.Err(); err != nil {
			return outs, nil, fmt.Errorf("interrupted before resource %s; `custody resume` finishes or rolls back %s: %w", spec.Name, rec.ID, err)
		}
		r, ok := byName[spec.Name]
		if !ok {
			r, err = declareResource(ctx, e, rec, spec)
			var ref *machine.Refusal
			if errors.As(err, &ref) {
				outs = append(outs, steps.ResourceOutcome{ID: r.ID, Handle: r.Handle, Outcome: machine.OutcomeRefused, Refusal: ref})
				if spec.Required {
					return outs, ref, nil
				}
				continue
			}
			if err != nil {
				return outs, nil, err
			}
			failpoint.At("resource/after-create-intent")
		} else if r.State == machine.StateProvisioning && r.Intent != nil {
			// An interrupted create: its outcome is unknown, so undo it
			// with the frozen destroy (result ignored), then create once.
			runResourceCommand(ctx, e, r, r.Destroy, nil)
		}
		if r.State == machine.StateProvisioning {
			if r, err = createResource(ctx, e, r); err != nil {
				return outs, nil, err
			}
		}
		o := steps.ResourceOutcome{ID: r.ID, Handle: r.Handle, Outcome: machine.Outcome(r.Evidence.Outcome), ExitCode: r.Evidence.ExitCode}
		if r.State != machine.StateActive {
			o.Refusal = machine.CreateResourceFailedRefusal(rec, spec.Name, r)
			outs = append(outs, o)
			if spec.Required {
				return outs, o.Refusal, nil
			}
			continue
		}
		outs = append(outs, o)
	}
	return outs, nil, writeEnv(ctx, e, rec)
}

// teardownResources destroys rec's resources in reverse creation order,
// each with its own intent. Failures stay in the ledger for orphan GC.
func teardownResources(ctx context.Context, e *steps.Env, id string) ([]steps.ResourceOutcome, error) {
	rs, err := e.LiveResources(id)
	if err != nil {
		return nil, err
	}
	var outs []steps.ResourceOutcome
	for i := len(rs) - 1; i >= 0; i-- {
		if err := ctx.Err(); err != nil {
			return outs, fmt.Errorf("interrupted while tearing down the resources of %s; custody resource gc reclaims the rest: %w", id, err)
		}
		r, err := destroyResource(ctx, e, rs[i])
		if errors.Is(err, store.ErrConflict) {
			// Another custody (gc, a concurrent apply) acted on the entry
			// first: report what it is now instead of failing.
			now, gerr := e.Store.GetResource(rs[i].ID)
			if gerr != nil {
				return outs, gerr
			}
			o := steps.ResourceOutcome{ID: now.ID, Handle: now.Handle, Outcome: machine.OutcomeAlreadyDone}
			if now.State != machine.StateTombstoned {
				o.Outcome = machine.OutcomeInProgress
			}
			outs = append(outs, o)
			continue
		}
		if err != nil {
			var ref *machine.Refusal
			if errors.As(err, &ref) {
				outs = append(outs, steps.ResourceOutcome{ID: r.ID, Handle: r.Handle, Outcome: machine.OutcomeRefused, Refusal: ref})
				continue
			}
			return outs, err
		}
		o := steps.ResourceOutcome{ID: r.ID, Handle: r.Handle, Outcome: machine.Outcome(r.Evidence.Outcome), ExitCode: r.Evidence.ExitCode}
		if r.State != machine.StateTombstoned {
			o.Refusal = machine.TeardownFailedRefusal(r)
		}
		outs = append(outs, o)
	}
	return outs, nil
}

// fireResource takes trigger t on a ledger entry.
func fireResource(ctx context.Context, e *steps.Env, r machine.Resource, t machine.Trigger, f machine.ResourceFiring, outcome string) (machine.Resource, error) {
	f.Res = r
	f.Now = e.Now().UTC()
	return steps.Fire(ctx, e, steps.Transition[machine.Resource, machine.ResourceFiring]{
		Spec: machine.ResourceSpecMachine(),
		Next: func(to machine.State, t machine.Trigger, f machine.ResourceFiring) machine.Resource {
			return machine.NextResource(r, to, t, f)
		},
	}, r, t, f, outcome)
}
