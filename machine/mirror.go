package machine

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"time"

	json "github.com/custody-sh/custody/machine/bytejson"
)

// MirrorFormat names one file of the user-level ledger of resources: the
// mirror of one repository ledger entry, kept under the XDG state
// directory so that the entry's frozen destroy outlives the repository
// (decision 0256).
const MirrorFormat = "custody.resource-mirror/1"

// ErrMirror is returned for a mirror file custody does not read: another
// format, malformed JSON, or an entry without its ids.
var ErrMirror = errors.New("not a custody resource mirror")

// MirrorRepository is the repository a mirrored entry belongs to: its
// random id (kept in its state file) and where it was when the entry was
// last written.
type MirrorRepository struct {
	ID           string `json:"id"`
	CommonDir    string `json:"common_dir"`
	MainCheckout string `json:"main_checkout"`
	// Host is the host the entry was written on: its paths and its
	// destroy mean something only there (a home directory shared between
	// hosts shares this ledger).
	Host string `json:"host"`
}

// Mirror is one ledger entry as the user-level ledger holds it: what its
// destroy needs and nothing more. Resource is the repository ledger's own
// entry with its create and ensure commands and its commands' output
// left out, so the mirror never holds anything the repository ledger does
// not. Resource.Intent is the mirror's own intent: a create intent while
// the repository's custody declares the entry, a destroy intent while
// custody resource gc --gone-repos runs its destroy.
type Mirror struct {
	Format     string           `json:"format"`
	Repository MirrorRepository `json:"repository"`
	Resource   Resource         `json:"resource"`
}

// MirrorOf is the mirror of ledger entry r of repository repo: r without
// its create and ensure commands and without output.
func MirrorOf(repo MirrorRepository, r Resource) Mirror {
	m := r
	m.Create, m.Ensure = "", ""
	m.Evidence.Output = ""
	m.Intent = copyResourceIntent(r.Intent)
	if len(r.Env) > 0 {
		m.Env = make(map[string]string, len(r.Env))
		for k, v := range r.Env {
			m.Env[k] = v
		}
	}
	return Mirror{Format: MirrorFormat, Repository: repo, Resource: m}
}

// ParseMirror reads a mirror file's bytes: its format, then a repository
// id, an absolute common dir and an entry id.
func ParseMirror(b []byte) (Mirror, error) {
	var m Mirror
	dec := json.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(&m); err != nil {
		return Mirror{}, fmt.Errorf("%w: %v", ErrMirror, err)
	}
	if m.Format != MirrorFormat {
		return Mirror{}, fmt.Errorf("%w: format %q, want %q", ErrMirror, m.Format, MirrorFormat)
	}
	if m.Repository.ID == "" || m.Resource.ID == "" || (!strings.HasPrefix(m.Repository.CommonDir, "/") && !windowsAbs(m.Repository.CommonDir)) {
		return Mirror{}, fmt.Errorf("%w: no repository id, absolute common_dir and entry id", ErrMirror)
	}
	return m, nil
}

// GoneFacts is what custody resource gc --gone-repos observed about one
// mirrored entry and its repository.
type GoneFacts struct {
	// Host is this host's name.
	Host string
	// CommonDir is what is at the repository's recorded common dir.
	CommonDir PathState
	// MovedTo is the main checkout of a repository in the index of
	// repositories whose state file holds the same repository id at
	// another common dir: the repository was moved, not deleted.
	MovedTo string
	// Unreadable names an indexed repository whose id could not be read
	// (its state file locked for longer than the lock timeout, damaged):
	// it may be this repository, moved.
	Unreadable string
	// Parent is what is at the directory that held the repository's main
	// checkout: absent, the whole directory went, or a volume is not
	// mounted, which looks the same.
	Parent PathState
	// HolderAlive: a live custody process holds the mirror's intent.
	HolderAlive bool
	// Tree is what is at the entry's worktree path.
	Tree PathState
}

// GoneVerdict is the decision about one mirrored entry. Present says its
// repository is where the mirror recorded it: the repository's own
// custody keeps its ledger, and gc --gone-repos does not list it.
type GoneVerdict struct {
	Reclaim bool
	Present bool
	MovedTo string
	// OtherHost is the host the entry was recorded on when it is not this
	// one: it is kept, and only gc --gone-repos on that host decides it.
	OtherHost string
	Refusal   *Refusal
}

// GoneRetry is the command that looks at the resources of gone
// repositories again.
const GoneRetry = "custody resource gc --gone-repos --dry-run"

// DecideGone decides whether custody resource gc --gone-repos may run the
// frozen destroy of mirrored entry m: only when it was recorded on this
// host, its repository is gone
// (nothing at the recorded common dir, and no repository in the index
// holds its id elsewhere, every indexed repository's id read, and the
// directory that held it is there), no live
// custody holds its intent, nothing stands at its worktree's path, gc is
// not false, and its destroy carries no token. The destroy was approved
// with the custody.toml that froze it; it needs no approval again.
func DecideGone(m Mirror, f GoneFacts) GoneVerdict {
	r := m.Resource
	keep := func(code Code, retry, format string, args ...any) GoneVerdict {
		return GoneVerdict{Refusal: &Refusal{Code: code, Path: m.Repository.CommonDir, Retry: retry, Message: fmt.Sprintf(format, args...)}}
	}
	switch {
	case m.Repository.Host != f.Host:
		return GoneVerdict{OtherHost: m.Repository.Host}
	case f.CommonDir == PathPresent:
		return GoneVerdict{Present: true}
	case f.CommonDir != PathAbsent:
		return keep(CodeObservationFailed, GoneRetry, "%s, the common dir of repository %s, could not be observed; its resources are kept", m.Repository.CommonDir, m.Repository.ID)
	case f.MovedTo != "":
		return GoneVerdict{MovedTo: f.MovedTo}
	case f.Unreadable != "":
		return keep(CodeObservationFailed, GoneRetry, "the repository id of %s could not be read, and it may be repository %s moved; the resources of %s are kept", f.Unreadable, m.Repository.ID, r.ID)
	case f.Parent != PathPresent:
		return keep(CodeObservationFailed, GoneRetry, "%s, the directory that held repository %s, is not there either: a volume that is not mounted looks the same as a deleted directory, so the resources of %s are kept; mount it, or, when it was deleted, make the directory again (mkdir -p) and retry", parentOf(m.Repository.MainCheckout), m.Repository.ID, r.ID)
	case f.HolderAlive:
		return keep(CodeInProgress, GoneRetry, "resource %s is being acted on by a live custody process", r.ID)
	case f.Tree == PathPresent:
		v := keep(CodeWorktreeLive, "custody resource gc --gone-repos", "%s, the worktree path of %s, is still present though its repository is gone; what stands there is yours to keep or move away, and the resource is reclaimed once nothing is there", r.Path, r.ID)
		v.Refusal.Path = r.Path
		return v
	case f.Tree != PathAbsent:
		v := keep(CodeObservationFailed, GoneRetry, "%s, the worktree path of %s, could not be observed", r.Path, r.ID)
		v.Refusal.Path = r.Path
		return v
	case !r.GC:
		return keep(CodeGCDisabled, GoneRetry, "the repository of resource %s is gone, but it has gc = false; destroy %s yourself", r.ID, r.Handle)
	case Unexpanded(r.Destroy) != "":
		return keep(CodeUnexpandedToken, GoneRetry, "the frozen destroy command of %s still carries %s; it is never half-run", r.ID, Unexpanded(r.Destroy))
	}
	return GoneVerdict{Reclaim: true}
}

// parentOf is the directory that holds p (p itself when it has none).
func parentOf(p string) string {
	for i := len(p) - 1; i > 0; i-- {
		if p[i] == '/' || p[i] == '\\' {
			return p[:i]
		}
	}
	return p
}

// GoneDestroyFailedRefusal reports that the destroy of mirrored entry m
// exited code with output out: the user-level ledger keeps it, and the
// next run tries again.
func GoneDestroyFailedRefusal(m Mirror, code int, out string) *Refusal {
	return &Refusal{Code: CodeResourceFailed, Path: m.Repository.CommonDir, Retry: "custody resource gc --gone-repos",
		Message: fmt.Sprintf("destroy of %s (%s) of the gone repository %s exited %d: %s; the user-level ledger keeps it", m.Resource.ID, m.Resource.Handle, m.Repository.ID, code, out)}
}

// MirrorUnreadableRefusal reports a file of the user-level ledger that
// could not be read as a mirror (or is not the user's own, or others may
// write it): nothing of it is run.
func MirrorUnreadableRefusal(path string, err error) *Refusal {
	return &Refusal{Code: CodeObservationFailed, Path: path, Retry: GoneRetry,
		Message: fmt.Sprintf("%s is not a mirror custody runs: %v", path, err)}
}

// MirrorIntent is the destroy intent gc --gone-repos records in a mirror
// before it runs the frozen destroy: held by holder from now, with the
// process group of an earlier, interrupted run kept so it is ended first.
func MirrorIntent(m Mirror, holder Holder, now time.Time) *ResourceIntent {
	in := &ResourceIntent{Kind: IntentResourceDestroy, Command: m.Resource.Destroy, Holder: holder, At: now.UTC()}
	if m.Resource.Intent != nil && m.Resource.Intent.Group != nil {
		g := *m.Resource.Intent.Group
		in.Group = &g
	}
	return in
}
