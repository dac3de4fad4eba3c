package journalcheck_test

// A history made by the binary in a real repository (worktrees removed on
// ancestry and on an archive, a resource made and destroyed, custody.toml
// approved, a legacy tree migrated), exported plain and redacted, then:
// the independent verifier of this package (docs/formats.md alone, no
// custody import) agrees with `custody journal verify` on each, passing
// and failing; and a forgery corpus over the redacted export (every value
// of one entry of each type changed, members dropped and added, entries
// dropped, repeated and swapped) is caught by store.Verifier in process
// and by the independent verifier, each naming the entry and, for a
// changed value, its member, with no --home, --root or --host; a sample
// goes through the binary.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/custody-sh/custody/cmd/custody/e2e/journalcheck"
	"github.com/custody-sh/custody/cmd/custody/internal/clitest"
	"github.com/custody-sh/custody/fixtures"
	"github.com/custody-sh/custody/store"
)

func TestMain(m *testing.M) {
	os.Exit(clitest.Main(m))
}

// history is a generated journal, exported both ways.
type history struct {
	r          *fixtures.Repo
	plain, red []byte
	head       string
	dir        string
}

func makeHistory(t *testing.T) history {
	t.Helper()
	r := fixtures.New(t, fixtures.Options{})
	clitest.MustCustody(t, r, 0, "init")
	clitest.WriteTrusted(t, r, "[resources.cache]\ncreate = 'true PGPASSWORD=hunter2 https://deploy:tok3n@db.example.com/x'\ndestroy = 'true'\n")

	anc, ancPath := clitest.NewTree(t, r, "ancestry")
	r.Commit(ancPath, "anc.txt", "published\n")
	r.Push(ancPath, "main")
	arc, arcPath := clitest.NewTree(t, r, "archived")
	r.Commit(arcPath, "a.txt", "only in the archive\n")
	if err := os.Remove(filepath.Join(arcPath, ".env")); err != nil {
		t.Fatal(err)
	}
	clitest.MustCustody(t, r, 0, "finish", anc)
	clitest.MustCustody(t, r, 0, "finish", "--archive", arc)
	plan := filepath.Join(r.Root, "plan.json")
	clitest.PlanAllowPending(t, r, "-o", plan)
	clitest.MustCustody(t, r, 0, "apply", plan)

	// A legacy tree outside the managed root, with a space in its path:
	// audited, proposed, approved and applied.
	legacy := filepath.Join(r.Root, "legacy tree")
	r.Git("worktree", "add", "-q", legacy, "-b", "legacy")
	mp := clitest.MigratePlan(t, r, "migrate.json")
	if len(mp.Candidates) == 0 {
		t.Fatal("migrate plan found no candidate")
	}
	clitest.MigrateDisposeAll(t, r, mp)
	clitest.Custody(t, r, "migrate", "apply")

	dir := t.TempDir()
	h := history{r: r, dir: dir}
	clitest.MustCustody(t, r, 0, "journal", "export", "-o", filepath.Join(dir, "plain.jsonl"))
	clitest.MustCustody(t, r, 0, "journal", "export", "--redact", "-o", filepath.Join(dir, "red.jsonl"))
	var err error
	if h.plain, err = os.ReadFile(filepath.Join(dir, "plain.jsonl")); err != nil {
		t.Fatal(err)
	}
	if h.red, err = os.ReadFile(filepath.Join(dir, "red.jsonl")); err != nil {
		t.Fatal(err)
	}
	out := clitest.MustCustody(t, r, 0, "journal", "head").Stdout
	f := strings.Fields(out)
	if len(f) != 2 {
		t.Fatalf("journal head printed %q", out)
	}
	h.head = f[1]
	for _, secret := range []string{"hunter2", "tok3n", r.Dir, r.Root, "legacy tree", `"salt"`} {
		for _, l := range bytes.Split(h.red, []byte("\n")) {
			if bytes.Contains(l, []byte(secret)) {
				t.Errorf("the redacted export shows %q:\n%s", secret, l)
			}
		}
	}
	return h
}

// TestRedactedExports generates one history and runs every check on it.
func TestRedactedExports(t *testing.T) {
	h := makeHistory(t)
	t.Run("independent verifier agrees", func(t *testing.T) { agrees(t, h) })
	t.Run("forgery corpus", func(t *testing.T) { forgeryCorpus(t, h) })
}

// verifyBoth runs store.Verify and the independent verifier on in; it
// returns their errors.
func verifyBoth(in []byte, redacted bool, head string, gaps bool) (error, error) {
	_, err := store.Verify(bytes.NewReader(in), store.VerifyOptions{Head: head, Redacted: redacted, AllowGaps: gaps})
	_, ind := journalcheck.Verify(bytes.NewReader(in), journalcheck.Options{Head: head, Redacted: redacted, AllowGaps: gaps})
	return err, ind
}

func agrees(t *testing.T, h history) {
	for _, c := range []struct {
		name     string
		in       []byte
		redacted bool
		pass     bool
		binary   bool // also through the binary
	}{
		{"plain", h.plain, false, true, true},
		{"plain as redacted", h.plain, true, true, false},
		{"redacted", h.red, true, true, true},
		{"redacted without --redacted", h.red, false, false, false},
		{"plain, an outcome changed", bytes.Replace(h.plain, []byte(`"outcome":"`), []byte(`"outcome":"kept `), 1), false, false, false},
		{"redacted, an outcome changed", bytes.Replace(h.red, []byte(`"outcome":"`), []byte(`"outcome":"kept `), 1), true, false, true},
		{"redacted, the last entry dropped", h.red[:bytes.LastIndexByte(h.red[:len(h.red)-1], '\n')+1], true, false, false},
	} {
		err, ind := verifyBoth(c.in, c.redacted, h.head, false)
		if (err == nil) != c.pass || (ind == nil) != c.pass {
			t.Errorf("%s: journal verify says %v, the independent verifier %v; want pass=%v", c.name, err, ind, c.pass)
		}
		if err != nil && ind != nil {
			var f *journalcheck.Failure
			if errors.As(ind, &f) && !strings.Contains(err.Error(), fmt.Sprintf("(line %d)", f.Line)) && !strings.Contains(err.Error(), "not at the head") && !strings.Contains(err.Error(), "redacted") {
				t.Errorf("%s: journal verify names %v, the independent verifier line %d", c.name, err, f.Line)
			}
		}
		if !c.binary {
			continue
		}
		// The binary agrees too.
		file := filepath.Join(h.dir, strings.ReplaceAll(c.name, " ", "-")+".jsonl")
		if err := os.WriteFile(file, c.in, 0o600); err != nil {
			t.Fatal(err)
		}
		args := []string{"journal", "verify", "--head", h.head, file}
		if c.redacted {
			args = append(args[:2], append([]string{"--redacted"}, args[2:]...)...)
		}
		want := 0
		if !c.pass {
			want = 1
		}
		res := clitest.MustCustody(t, h.r, want, args...)
		if c.pass && c.redacted && bytes.Equal(c.in, h.red) && !strings.Contains(res.Stdout, "content authenticated from seq 1") {
			t.Errorf("%s: verify does not say from which seq content is authenticated:\n%s", c.name, res.Stdout)
		}
	}
	rep, err := store.Verify(bytes.NewReader(h.red), store.VerifyOptions{Head: h.head, Redacted: true})
	if err != nil || rep.ContentChecked != rep.Entries || rep.ChainOnly != 0 {
		t.Errorf("the redacted export: %+v, %v; want every entry checked by content", rep, err)
	}
	for _, k := range []string{store.RedactPath, store.RedactHost, store.RedactUser, store.RedactURL, store.RedactCommand} {
		if rep.RedactedFields[k] == 0 {
			t.Errorf("no %s was redacted: %v", k, rep.RedactedFields)
		}
	}
	// The independent verifier imports nothing of custody.
	f, err := parser.ParseFile(token.NewFileSet(), "journalcheck.go", nil, parser.ImportsOnly)
	if err != nil {
		t.Fatal(err)
	}
	for _, im := range f.Imports {
		if p, _ := strconv.Unquote(im.Path.Value); strings.Contains(p, ".") {
			t.Errorf("journalcheck.go imports %s: the independent verifier must use the standard library only", p)
		}
	}
}

// lineType is what makes a line's type: its kind, trigger and event.
func lineType(l []byte) string {
	var e struct{ Kind, Trigger, Event string }
	_ = json.Unmarshal(store.DisplayLine(l), &e)
	return e.Kind + "/" + e.Trigger + "/" + e.Event
}

func forgeryCorpus(t *testing.T, h history) {
	lines := bytes.SplitAfter(h.red, []byte("\n"))
	if len(lines[len(lines)-1]) == 0 {
		lines = lines[:len(lines)-1]
	}
	join := func(ls [][]byte) []byte { return bytes.Join(ls, nil) }
	// One line of each type, by its top-level kind, trigger and event.
	types := map[string]int{}
	for i, l := range lines {
		if _, ok := types[lineType(l)]; !ok {
			types[lineType(l)] = i
		}
	}
	if len(types) < 10 {
		t.Fatalf("the history has %d entry types, want at least 10: %v", len(types), types)
	}
	type forgery struct {
		name   string
		in     []byte
		line   int    // the 1-based line verify must name
		member string // the member it must name ("" for any)
		// alone: in is the forged line alone, verified by its own hash
		// (AllowGaps, no head): each in-place forgery must be caught by
		// the line itself, not only by the chain.
		alone bool
	}
	var corpus []forgery
	for typ, i := range types {
		l := lines[i]
		for _, leaf := range journalcheck.Leaves(l) {
			tok := l[leaf.Start:leaf.End]
			var changed []byte
			switch {
			case tok[0] == '"':
				changed = append([]byte(`"x`), tok[1:]...)
			case string(tok) == "true":
				changed = []byte("false")
			case string(tok) == "false":
				changed = []byte("true")
			case string(tok) == "null":
				changed = []byte("0")
			default:
				changed = append(bytes.Clone(tok), '1')
			}
			forged := append(append(append([]byte(nil), l[:leaf.Start]...), changed...), l[leaf.End:]...)
			member := leaf.Member
			if member == "hash" || member == "member_digests" {
				member = ""
			}
			ls := append([][]byte{}, lines...)
			ls[i] = forged
			corpus = append(corpus, forgery{fmt.Sprintf("%s: %s at %d changed", typ, leaf.Member, leaf.Start), forged, i + 1, member, true})
		}
		ms := journalcheck.Members(l)
		for k, m := range ms {
			// The member dropped, with the comma that joined it.
			start, end := m.Start, m.End
			if k+1 < len(ms) {
				end = ms[k+1].Start
			} else if k > 0 {
				start = ms[k-1].End
			}
			forged := append(append([]byte(nil), l[:start]...), l[end:]...)
			ls := append([][]byte{}, lines...)
			ls[i] = forged
			member := m.Name
			if member == "hash" || member == "member_digests" || member == "seq" || member == "prev" {
				member = ""
			}
			corpus = append(corpus, forgery{typ + ": " + m.Name + " dropped", forged, i + 1, member, true})
		}
		// The same content spelled otherwise: a space, members reordered.
		spaced := bytes.Replace(l, []byte(`,"`), []byte(`, "`), 1)
		corpus = append(corpus, forgery{typ + ": a space added", spaced, i + 1, "", true})
		if len(ms) > 1 {
			first, second := l[ms[0].Start:ms[0].End], l[ms[1].Start:ms[1].End]
			swapped := append(append(append(append([]byte("{"), second...), ','), first...), l[ms[1].End:]...)
			corpus = append(corpus, forgery{typ + ": two members reordered", swapped, i + 1, "", true})
		}
		ls := append([][]byte{}, lines...)
		ls[i] = bytes.Replace(l, []byte(`{`), []byte(`{"note":"added",`), 1)
		corpus = append(corpus, forgery{typ + ": a member added", ls[i], i + 1, "note", true})
	}
	for i := range lines {
		if i+1 < len(lines) {
			ls := append([][]byte{}, lines...)
			ls[i], ls[i+1] = ls[i+1], ls[i]
			corpus = append(corpus, forgery{fmt.Sprintf("entries %d and %d swapped", i+1, i+2), join(ls), i + 1, "", false})
		}
		ls := append(append([][]byte{}, lines[:i]...), lines[i+1:]...)
		bad := i + 1
		if i == len(lines)-1 {
			bad = 0 // dropped from the end: only the head says so
		}
		corpus = append(corpus, forgery{fmt.Sprintf("entry %d dropped", i+1), join(ls), bad, "", false})
		ls = append(append(append([][]byte{}, lines[:i+1]...), lines[i]), lines[i+1:]...)
		corpus = append(corpus, forgery{fmt.Sprintf("entry %d repeated", i+1), join(ls), i + 2, "", false})
	}
	names := make([]string, 0, len(types))
	for typ := range types {
		names = append(names, typ)
	}
	sort.Strings(names)
	t.Logf("%d forgeries over %d entries of %d types (kind/trigger/event): %s", len(corpus), len(lines), len(types), strings.Join(names, ", "))
	for n, f := range corpus {
		head, line := h.head, f.line
		if f.alone {
			head, line = "", 1
		}
		err, ind := verifyBoth(f.in, true, head, f.alone)
		if !errors.Is(err, store.ErrJournalBroken) || ind == nil {
			t.Errorf("%s: not detected: journal verify %v, independent %v", f.name, err, ind)
			continue
		}
		if f.line != 0 && !namesLine(err.Error(), line) {
			t.Errorf("%s: journal verify names %q, not line %d", f.name, err, line)
		}
		if f.member != "" && !strings.Contains(err.Error(), strconv.Quote(f.member)) {
			t.Errorf("%s: journal verify does not name member %q: %v", f.name, f.member, err)
		}
		var jf *journalcheck.Failure
		if f.line != 0 && (!errors.As(ind, &jf) || jf.Line != line) {
			t.Errorf("%s: the independent verifier says %v, not line %d", f.name, ind, line)
		}
		if f.member != "" && (jf == nil || jf.Member != f.member) {
			t.Errorf("%s: the independent verifier says %v, not member %q", f.name, ind, f.member)
		}
		// A sample through the binary, as an auditor runs it.
		if n%311 == 0 {
			file := filepath.Join(h.dir, fmt.Sprintf("forged-%d.jsonl", n))
			if err := os.WriteFile(file, f.in, 0o600); err != nil {
				t.Fatal(err)
			}
			args := []string{"journal", "verify", "--redacted", file}
			if f.alone {
				args = append(args, "--allow-gaps")
			} else {
				args = append(args, "--head", head)
			}
			res := clitest.MustCustody(t, h.r, 1, args...)
			if f.line != 0 && !namesLine(res.Stderr, line) {
				t.Errorf("%s: custody journal verify says %q, not line %d", f.name, res.Stderr, line)
			}
		}
	}
}

// namesLine reports whether a verify error names line n.
func namesLine(msg string, n int) bool {
	return strings.Contains(msg, fmt.Sprintf("(line %d)", n)) || strings.Contains(msg, fmt.Sprintf(": line %d ", n))
}
