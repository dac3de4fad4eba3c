package observe

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/custody-sh/custody/machine"
)

// Tip is one ref a remote advertised just now.
type Tip struct {
	Remote string
	Ref    string
	Commit string
	// Default is true for the branch the remote's HEAD names.
	Default bool
	// Target is the commit Commit names (an annotated tag peeled), as
	// Advertise resolved it; empty means Commit itself.
	Target string
}

// target is the commit t names.
func (t Tip) target() string {
	if t.Target != "" {
		return t.Target
	}
	return t.Commit
}

// RemoteView is one fresh advertisement of every configured remote. Local
// remote-tracking refs and local tags are never part of it.
type RemoteView struct {
	Remotes  []string
	Tips     []Tip
	Failures []machine.RemoteFailure
	// patches holds the patch ids proofs computed against this view, so
	// that every tree of one plan shares them; nil computes afresh. It is
	// safe for concurrent use.
	patches *patchCache
}

// Evidence returns the view as recorded in an observation.
func (v *RemoteView) Evidence() machine.RemoteEvidence {
	if v == nil {
		return machine.RemoteEvidence{}
	}
	return machine.RemoteEvidence{Remotes: v.Remotes, Unavailable: v.Failures}
}

// RemoteTimeout bounds one remote's advertisement or fetch, unless
// Git.RemoteTimeout says otherwise.
const RemoteTimeout = 60 * time.Second

// Advertise asks every configured remote for its refs (`git ls-remote
// --refs`), fetches advertised commits missing locally with source-only
// refspecs into no local ref, and returns the tips whose objects are present,
// default branches first. A remote that does not answer within its deadline
// is listed in Failures, never treated as empty; every remote is asked once,
// in parallel, so a hung one costs one bounded wait per call, whatever the
// number of trees it speaks for; and a remote that did not answer is not
// asked again by the same Git (one command), so a command that advertises
// again for each tree's final observation waits for it once.
//
// A local remote is identified by the device and inode of its git dir
// (docs/decisions/0014-remote-identity.md): one that is this repository in
// disguise (a symlink, bind mount, file:// URL, relative path, the main
// checkout or a linked worktree) proves nothing and is a failure naming it;
// one that borrows this repository's objects through
// objects/info/alternates counts only if its own object store holds every
// object its tips reach.
func Advertise(ctx context.Context, g *Git, repo Repo) (*RemoteView, error) {
	out, err := g.Observe(ctx, repo.MainCheckout, "remote", "-v")
	if err != nil {
		return nil, fmt.Errorf("list remotes: %w", err)
	}
	v := &RemoteView{patches: newPatchCache()}
	urls := map[string][]string{}
	for _, line := range strings.Split(string(out), "\n") {
		name, rest, ok := strings.Cut(line, "\t")
		url, isFetch := strings.CutSuffix(rest, " (fetch)")
		if !ok || !isFetch {
			continue
		}
		if _, seen := urls[name]; !seen {
			v.Remotes = append(v.Remotes, name)
		}
		urls[name] = append(urls[name], url)
	}
	timeout := g.remoteTimeout()
	type answer struct {
		refs []RemoteRef
		err  error
		head string // the ref the remote's HEAD points at, if it says
	}
	answers := make([]answer, len(v.Remotes))
	// Local remotes are identified first, in-process: one that is this
	// repository, or cannot be identified, is not asked at all.
	refused := make([]*machine.RemoteFailure, len(v.Remotes))
	borrowing := map[string]string{}
	for i, r := range v.Remotes {
		if f, ok := identifyURLs(repo, r, urls[r]); ok {
			if f.Error != "" {
				refused[i] = &f
				continue
			}
			borrowing[r] = f.Remote
		}
	}
	var wg sync.WaitGroup
	for i, r := range v.Remotes {
		if refused[i] != nil {
			continue
		}
		if why, ok := g.unanswered.get(memoKey(r, urls[r])); ok {
			answers[i].err = errors.New(why + " (asked once in this command)")
			continue
		}
		wg.Add(2)
		go func() {
			// The remote's default branch, only to try it first.
			defer wg.Done()
			rctx, cancel := context.WithTimeout(ctx, timeout)
			defer cancel()
			if b, err := g.Observe(rctx, repo.MainCheckout, "ls-remote", "--symref", "--", r, "HEAD"); err == nil {
				answers[i].head = symrefHead(b)
			}
		}()
		go func() {
			defer wg.Done()
			rctx, cancel := context.WithTimeout(ctx, timeout)
			defer cancel()
			b, err := g.Observe(rctx, repo.MainCheckout, "ls-remote", "--refs", "--", r)
			if err != nil {
				if errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
					err = fmt.Errorf("no answer within %s: %w", timeout, err)
				}
				answers[i].err = err
				return
			}
			answers[i].refs, answers[i].err = ParseLsRemote(b)
		}()
	}
	wg.Wait()
	for i, r := range v.Remotes {
		if refused[i] != nil {
			v.Failures = append(v.Failures, *refused[i])
			continue
		}
		if answers[i].err != nil {
			g.unanswered.put(memoKey(r, urls[r]), answers[i].err.Error())
			v.Failures = append(v.Failures, machine.RemoteFailure{Remote: r, Error: answers[i].err.Error()})
			continue
		}
		for _, ref := range answers[i].refs {
			v.Tips = append(v.Tips, Tip{Remote: r, Ref: ref.Name, Commit: ref.Commit, Default: ref.Name == answers[i].head})
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := v.dropBorrowed(ctx, g, borrowing, urls); err != nil {
		return nil, err
	}
	if err := v.ensureObjects(ctx, g, repo, urls); err != nil {
		return nil, err
	}
	sort.SliceStable(v.Tips, func(i, j int) bool { return tipRank(v.Tips[i]) < tipRank(v.Tips[j]) })
	return v, nil
}

// memoKey names a remote by its name and fetch URLs, for Git.unanswered.
func memoKey(remote string, urls []string) string {
	return remote + "\x00" + strings.Join(urls, "\x00")
}

// identifyURLs identifies each local URL of remote. It returns a failure
// (ok, with Error set) when one is this repository or cannot be
// identified, ok with Remote set to the borrowing git dir when one borrows
// this repository's objects, and !ok when neither holds.
func identifyURLs(repo Repo, remote string, urls []string) (machine.RemoteFailure, bool) {
	for _, url := range urls {
		p, local := LocalRemotePath(url, repo.MainCheckout)
		if !local {
			continue
		}
		id, err := identifyRemote(repo, p)
		switch {
		case err != nil:
			return remoteRefusal(remote, url, "cannot be identified, so it proves nothing: "+err.Error()), true
		case id.Self != "":
			return remoteRefusal(remote, url, "is this repository itself ("+id.Self+"): its refs are local refs, never proof"), true
		case id.Borrows != "":
			return machine.RemoteFailure{Remote: id.Borrows}, true
		}
	}
	return machine.RemoteFailure{}, false
}

// dropBorrowed removes the tips of every remote that borrows this
// repository's objects (borrowing maps it to its git dir) unless the
// remote's own object store holds every object they reach, and records
// such a remote as a failure: objects it reads from this repository are
// not elsewhere.
func (v *RemoteView) dropBorrowed(ctx context.Context, g *Git, borrowing map[string]string, urls map[string][]string) error {
	if len(borrowing) == 0 {
		return nil
	}
	commits := map[string][]string{}
	for _, t := range v.Tips {
		if _, ok := borrowing[t.Remote]; ok {
			commits[t.Remote] = append(commits[t.Remote], t.Commit)
		}
	}
	bad := map[string]bool{}
	for _, r := range v.Remotes {
		gitDir, ok := borrowing[r]
		if !ok || len(commits[r]) == 0 {
			continue
		}
		whole, err := ownObjectsComplete(ctx, g, gitDir, commits[r])
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			whole = false
		}
		if !whole {
			bad[r] = true
			v.Failures = append(v.Failures, remoteRefusal(r, urls[r][0], "borrows this repository's objects through "+
				filepath.Join(gitDir, "objects", "info", "alternates")+" and does not hold every object its refs reach itself, so it proves nothing"))
		}
	}
	kept := v.Tips[:0]
	for _, t := range v.Tips {
		if !bad[t.Remote] {
			kept = append(kept, t)
		}
	}
	v.Tips = kept
	return nil
}

// ensureObjects fetches advertised commits that are missing locally, by
// ref name with a source-only refspec and an empty refmap (so no local ref
// is written, not even a remote-tracking one), then drops tips that still
// do not name a commit here: missing objects, and tags of blobs or trees,
// cannot prove anything.
func (v *RemoteView) ensureObjects(ctx context.Context, g *Git, repo Repo, urls map[string][]string) error {
	missing, err := unresolved(ctx, g, repo, v.Tips, "")
	if err != nil {
		return err
	}
	byRemote := map[string][]string{}
	for _, t := range v.Tips {
		if missing[t.Commit] && !Synthetic(t.Ref) {
			byRemote[t.Remote] = append(byRemote[t.Remote], t.Ref)
		}
	}
	for remote, refs := range byRemote {
		key := memoKey(remote, urls[remote])
		if why, ok := g.unanswered.get(key); ok {
			v.Failures = append(v.Failures, machine.RemoteFailure{Remote: remote, Error: why + " (asked once in this command)"})
			continue
		}
		if g.NoFetch != nil {
			v.Failures = append(v.Failures, machine.RemoteFailure{Remote: remote,
				Error: fmt.Sprintf("%d advertised ref(s) name commits this repository lacks, and custody cannot fetch them: %v; fetch them where the repository is writable, then plan again", len(refs), g.NoFetch)})
			continue
		}
		fctx, cancel := context.WithTimeout(ctx, g.remoteTimeout())
		args := append([]string{"fetch", "--quiet", "--no-tags", "--no-write-fetch-head", "--refmap=", "--no-recurse-submodules", "--", remote}, refs...)
		_, err := g.Mutate(fctx, repo.MainCheckout, args...)
		cancel()
		if err != nil && ctx.Err() == nil {
			why := "fetch advertised commits: " + err.Error()
			g.unanswered.put(key, why)
			v.Failures = append(v.Failures, machine.RemoteFailure{Remote: remote, Error: why})
		}
	}
	peeled, err := peel(ctx, g, repo, v.Tips)
	if err != nil {
		return err
	}
	kept := v.Tips[:0]
	for _, t := range v.Tips {
		if c, ok := peeled[t.Commit]; ok {
			t.Target = c
			kept = append(kept, t)
		}
	}
	v.Tips = kept
	return nil
}

// unresolved asks `git cat-file --batch-check` about each tip's object
// (with suffix appended, e.g. "^{commit}") and returns the object ids that
// did not resolve.
func unresolved(ctx context.Context, g *Git, repo Repo, tips []Tip, suffix string) (map[string]bool, error) {
	if len(tips) == 0 {
		return nil, nil
	}
	var in bytes.Buffer
	seen := map[string]bool{}
	for _, t := range tips {
		if !seen[t.Commit] {
			seen[t.Commit] = true
			in.WriteString(t.Commit + suffix + "\n")
		}
	}
	out, err := g.ObserveInput(ctx, repo.MainCheckout, in.Bytes(), "cat-file", "--batch-check")
	if err != nil {
		return nil, fmt.Errorf("check advertised objects: %w", err)
	}
	bad := map[string]bool{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		if f := strings.Fields(sc.Text()); len(f) == 2 && f[1] == "missing" {
			bad[strings.TrimSuffix(f[0], suffix)] = true
		}
	}
	return bad, nil
}

// peel asks `git cat-file --batch-check` for the commit each tip's object
// names and returns it by object id; objects that are missing, or are not
// (tags of) commits, are absent.
func peel(ctx context.Context, g *Git, repo Repo, tips []Tip) (map[string]string, error) {
	if len(tips) == 0 {
		return nil, nil
	}
	var in bytes.Buffer
	var asked []string
	seen := map[string]bool{}
	for _, t := range tips {
		if !seen[t.Commit] {
			seen[t.Commit] = true
			asked = append(asked, t.Commit)
			in.WriteString(t.Commit + "^{commit}\n")
		}
	}
	out, err := g.ObserveInput(ctx, repo.MainCheckout, in.Bytes(), "cat-file", "--batch-check=%(objectname) %(objecttype)")
	if err != nil {
		return nil, fmt.Errorf("check advertised objects: %w", err)
	}
	lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	if len(lines) != len(asked) {
		return nil, fmt.Errorf("check advertised objects: %d answers for %d objects", len(lines), len(asked))
	}
	peeled := map[string]string{}
	for i, l := range lines {
		if f := strings.Fields(l); len(f) == 2 && f[1] == "commit" && isHexOID(f[0]) {
			peeled[asked[i]] = f[0]
		}
	}
	return peeled, nil
}

// Synthetic reports whether ref is one a forge makes up rather than one
// somebody pushed: GitHub's refs/pull/N/merge and GitLab's
// refs/merge-requests/N/merge are test merges the forge recomputes and
// drops at will (docs/decisions/0050-published-namespaces.md). Their
// commits are never fetched for a proof; one already present locally
// counts like any advertised ref while it is advertised.
func Synthetic(ref string) bool {
	for _, ns := range []string{"refs/pull/", "refs/merge-requests/"} {
		if rest, ok := strings.CutPrefix(ref, ns); ok {
			n, kind, ok := strings.Cut(rest, "/")
			return ok && n != "" && kind == "merge"
		}
	}
	return false
}

// tipRank orders tips for proofs: each remote's default branch first, then
// the usual default names, other branches, tags, everything else.
func tipRank(t Tip) int {
	if t.Default {
		return 0
	}
	switch t.Ref {
	case "refs/heads/main", "refs/heads/master", "refs/heads/trunk":
		return 1
	}
	switch {
	case strings.HasPrefix(t.Ref, "refs/heads/"):
		return 2
	case strings.HasPrefix(t.Ref, "refs/tags/"):
		return 3
	}
	return 4
}

// symrefHead reads "ref: <target>\tHEAD" from `git ls-remote --symref`.
func symrefHead(b []byte) string {
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "ref: "); ok {
			if target, name, ok := strings.Cut(rest, "\t"); ok && name == "HEAD" {
				return target
			}
		}
	}
	return ""
}

func isAncestor(ctx context.Context, g *Git, repo Repo, a, b string) (bool, error) {
	_, err := g.Observe(ctx, repo.MainCheckout, "merge-base", "--is-ancestor", a, b)
	if err == nil {
		return true, nil
	}
	var ee *ExitError
	if errors.As(err, &ee) && ee.Code == 1 {
		return false, nil
	}
	return false, fmt.Errorf("ancestry of %s against %s: %w", a, b, err)
}
