//go:build unix

package state

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/custody-sh/custody/cmd/custody/internal/clitest"
	"github.com/custody-sh/custody/fixtures"
	bolt "go.etcd.io/bbolt"
)

// corpusStore makes a repository with custody's state in it, grown (through
// bbolt directly, in the plans bucket, whose values doctor only checks as
// JSON) until it holds branch pages and an overflow page besides its meta,
// freelist and leaf pages. It returns the repository, the state file's path
// and its bytes.
func corpusStore(t *testing.T) (*fixtures.Repo, string, []byte) {
	t.Helper()
	r := fixtures.New(t, fixtures.Options{})
	clitest.MustCustody(t, r, 0, "init")
	id, _ := clitest.NewTree(t, r, "kept")
	clitest.MustCustody(t, r, 0, "finish", id)
	clitest.NewTree(t, r, "open")
	state := filepath.Join(r.Dir, ".git", "custody", "state.db")
	db, err := bolt.Open(state, 0o600, &bolt.Options{Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket([]byte("plans"))
		for i := range 300 {
			if err := b.Put(fmt.Appendf(nil, "sha256:%064d", i), fmt.Appendf(nil, `{"pad":%q}`, strings.Repeat("p", 40))); err != nil {
				return err
			}
		}
		return b.Put([]byte("sha256:big"), fmt.Appendf(nil, `{"pad":%q}`, strings.Repeat("o", 20000)))
	})
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
	full, err := os.ReadFile(state)
	if err != nil {
		t.Fatal(err)
	}
	return r, state, full
}

// pageTypes classifies the pages of a bbolt file by their headers: meta,
// freelist, branch, leaf and overflow (the pages an overflowing page spans).
func pageTypes(full []byte, pageSize int) map[string][]int {
	types := map[string][]int{"meta": {0, 1}}
	for pg := 2; (pg+1)*pageSize <= len(full); pg++ {
		h := full[pg*pageSize:]
		if binary.LittleEndian.Uint64(h) != uint64(pg) {
			continue
		}
		name := map[uint16]string{0x01: "branch", 0x02: "leaf", 0x10: "freelist"}[binary.LittleEndian.Uint16(h[8:])]
		if name == "" {
			continue
		}
		types[name] = append(types[name], pg)
		for o := 1; o <= int(binary.LittleEndian.Uint32(h[12:])); o++ {
			types["overflow"] = append(types["overflow"], pg+o)
		}
	}
	return types
}

// readOnlyCommands are the commands that must never change the state file.
var readOnlyCommands = [][]string{
	{"list"}, {"show", "kept"}, {"plan"}, {"doctor"},
	{"journal", "export", "--redact", "--format", "md"}, {"journal", "head"},
}

// quickCommands are the read-only commands that read every bucket of the
// store (doctor's check and the whole journal), run on the many
// flipped-byte variants to keep the corpus fast; the rest run on zeroed
// pages, page pointers and the non-regular files.
var quickCommands = [][]string{{"doctor"}, {"journal", "export", "--redact", "--format", "md"}}

// runBounded runs custody with a deadline: a command that hangs on a
// damaged store fails the test instead of the whole run.
func runBounded(t *testing.T, r *fixtures.Repo, args ...string) clitest.Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, clitest.Bin(), args...)
	cmd.Dir, cmd.Env = r.Dir, r.Env()
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	res := clitest.Result{Stdout: out.String(), Stderr: errb.String(), Code: cmd.ProcessState.ExitCode()}
	if ctx.Err() != nil {
		t.Fatalf("custody %s hung on the damaged store (killed after 20s)", strings.Join(args, " "))
	}
	if err != nil && res.Code <= 0 {
		t.Fatalf("custody %s died: %v\n%s", strings.Join(args, " "), err, res)
	}
	for _, crash := range []string{"panic:", "fatal error", "SIGSEGV", "SIGBUS", "goroutine "} {
		if strings.Contains(res.Stderr, crash) {
			t.Fatalf("custody %s crashed on the damaged store:\n%s", strings.Join(args, " "), res)
		}
	}
	if res.Code != 0 && res.Code != 1 && res.Code != 3 {
		t.Fatalf("custody %s: exit %d, want 0, 1 or 3\n%s", strings.Join(args, " "), res.Code, res)
	}
	return res
}

// fileState is what a read-only command must leave unchanged.
type fileState struct {
	bytes []byte
	mtime time.Time
	mode  os.FileMode
}

func statState(t *testing.T, path string) fileState {
	t.Helper()
	fi, err := os.Lstat(path)
	if err != nil {
		t.Fatal(err)
	}
	fs := fileState{mtime: fi.ModTime(), mode: fi.Mode()}
	if fi.Mode().IsRegular() {
		if fs.bytes, err = os.ReadFile(path); err != nil {
			t.Fatal(err)
		}
	}
	return fs
}

// readOnlyUnchanged runs every read-only command on the state file as it
// is and fails unless each ends in time without crashing and leaves the
// file's bytes, mtime and type as they were. It returns each command's
// result.
func readOnlyUnchanged(t *testing.T, r *fixtures.Repo, state string, commands [][]string) map[string]clitest.Result {
	t.Helper()
	before := statState(t, state)
	results := map[string]clitest.Result{}
	for _, args := range commands {
		res := runBounded(t, r, args...)
		results[strings.Join(args, " ")] = res
		after := statState(t, state)
		if !bytes.Equal(after.bytes, before.bytes) || !after.mtime.Equal(before.mtime) || after.mode != before.mode {
			t.Fatalf("custody %s changed the state file (%d bytes, mtime %s, mode %s before; %d, %s, %s after)",
				strings.Join(args, " "), len(before.bytes), before.mtime, before.mode, len(after.bytes), after.mtime, after.mode)
		}
	}
	return results
}

// TestCorruptStoreCorpus damages the state file in every way the corpus
// knows — flipped bytes in every page type (meta, freelist, branch, leaf,
// overflow), zeroed pages, truncations — and runs every read-only command
// on it: none may crash, hang or change the file. A damaged first meta page
// with a good second one, and a damaged freelist, stay readable.
func TestCorruptStoreCorpus(t *testing.T) {
	t.Parallel()
	r, state, full := corpusStore(t)
	const pageSize = 4096
	types := pageTypes(full, pageSize)
	for _, kind := range []string{"meta", "freelist", "branch", "leaf", "overflow"} {
		if len(types[kind]) == 0 {
			t.Fatalf("the corpus store has no %s page (pages: %v)", kind, types)
		}
	}
	var variants []variant
	for kind, pages := range types {
		if len(pages) > 2 {
			pages = []int{pages[0], pages[len(pages)-1]}
		}
		for _, pg := range pages {
			base := pg * pageSize
			d := bytes.Clone(full)
			clear(d[base : base+pageSize])
			variants = append(variants, variant{fmt.Sprintf("%s page %d zeroed", kind, pg), d, kind, true})
			for _, off := range []int{0, 8, 10, 12, 16, 24, pageSize / 2} {
				d := bytes.Clone(full)
				d[base+off] ^= 0xff
				variants = append(variants, variant{fmt.Sprintf("%s page %d byte %d flipped", kind, pg, off), d, kind, false})
			}
		}
	}
	variants = append(variants, pointerVariants(full, pageSize, types)...)
	for _, n := range []int{0, 1, 100, pageSize, pageSize + 100, 2 * pageSize, len(full) / 2, len(full) - pageSize, len(full) - 1} {
		variants = append(variants, variant{fmt.Sprintf("truncated to %d of %d bytes", n, len(full)), bytes.Clone(full[:n]), "", false})
	}
	for _, v := range variants {
		t.Run(v.name, func(t *testing.T) {
			t.Parallel()
			rr := cloneRepo(t, r)
			st := filepath.Join(rr.Dir, ".git", "custody", "state.db")
			if err := os.WriteFile(st, v.data, 0o600); err != nil {
				t.Fatal(err)
			}
			cmds := quickCommands
			if v.zeroed || v.kind == "pointer" {
				cmds = readOnlyCommands
			}
			res := readOnlyUnchanged(t, rr, st, cmds)
			if v.zeroed && (v.kind == "meta" || v.kind == "freelist") {
				if got := res["list"]; got.Code != 0 || !strings.Contains(got.Stdout, "kept-") {
					t.Errorf("custody list on a store with its %s: want exit 0 (bbolt can still read it)\n%s", v.name, got)
				}
			}
		})
	}
	_ = state
}

// variant is one damaged copy of the corpus store.
type variant struct {
	name   string
	data   []byte
	kind   string
	zeroed bool
}

// pointerVariants rewrites page pointers, which bbolt follows without
// checking: the first child of every branch page and the root of every
// bucket stored in a leaf, pointed at the page itself (a loop), at a meta
// page, and far past the end of the file.
func pointerVariants(full []byte, pageSize int, types map[string][]int) []variant {
	var vs []variant
	set := func(name string, at int, pgid uint64) {
		d := bytes.Clone(full)
		binary.LittleEndian.PutUint64(d[at:], pgid)
		vs = append(vs, variant{name: name, data: d, kind: "pointer"})
	}
	for _, pg := range types["branch"] {
		at := pg*pageSize + 16 + 8 // element 0's pgid
		set(fmt.Sprintf("branch page %d points at itself", pg), at, uint64(pg))
		set(fmt.Sprintf("branch page %d points at a meta page", pg), at, 1)
		set(fmt.Sprintf("branch page %d points past the file", pg), at, 1<<40)
	}
	for _, pg := range types["leaf"] {
		base := pg * pageSize
		count := int(binary.LittleEndian.Uint16(full[base+10:]))
		for i := range count {
			e := base + 16 + 16*i
			if binary.LittleEndian.Uint32(full[e:])&1 == 0 {
				continue
			}
			v := e + int(binary.LittleEndian.Uint32(full[e+4:])) + int(binary.LittleEndian.Uint32(full[e+8:]))
			if binary.LittleEndian.Uint64(full[v:]) == 0 {
				continue // an inline bucket
			}
			set(fmt.Sprintf("bucket %d of leaf page %d points at its leaf", i, pg), v, uint64(pg))
			set(fmt.Sprintf("bucket %d of leaf page %d points past the file", i, pg), v, 1<<40)
		}
	}
	return vs
}

// cloneRepo copies the fixture repository (main checkout, worktrees and
// state) into a fresh directory at the same depth, so each variant damages
// its own copy. Worktree paths recorded in git and in the store still point
// at the original, which is fine for read-only commands.
func cloneRepo(t *testing.T, r *fixtures.Repo) *fixtures.Repo {
	t.Helper()
	c := *r
	c.TB = t
	c.Root = t.TempDir()
	c.Dir = filepath.Join(c.Root, filepath.Base(r.Dir))
	if out, err := exec.Command("cp", "-a", r.Dir, c.Dir).CombinedOutput(); err != nil {
		t.Fatalf("copy the fixture: %v\n%s", err, out)
	}
	return &c
}

// TestStateNotARegularFile puts a FIFO, a directory and a symlink (to a
// good store) at state.db: every read-only command refuses at once — no
// blocking on the FIFO — and leaves it as it was; doctor reports it as a
// problem with its fix (exit 3). The FIFO and the
// directory are state-corrupt (move it aside); the symlink is
// state-unreadable (the store it names must not be moved aside).
func TestStateNotARegularFile(t *testing.T) {
	t.Parallel()
	r, _, full := corpusStore(t)
	for _, kind := range []string{"fifo", "directory", "symlink"} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			rr := cloneRepo(t, r)
			st := filepath.Join(rr.Dir, ".git", "custody", "state.db")
			if err := os.Remove(st); err != nil {
				t.Fatal(err)
			}
			var err error
			switch kind {
			case "fifo":
				err = syscall.Mkfifo(st, 0o600)
			case "directory":
				err = os.Mkdir(st, 0o700)
			case "symlink":
				good := filepath.Join(t.TempDir(), "good.db")
				if err = os.WriteFile(good, full, 0o600); err == nil {
					err = os.Symlink(good, st)
				}
			}
			if err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			for cmd, res := range readOnlyUnchanged(t, rr, st, readOnlyCommands) {
				want := "state-corrupt"
				if kind == "symlink" {
					want = "state-unreadable" // the good store it names must not be moved aside
				}
				if cmd == "doctor" {
					// doctor reports the damage it is for (0227).
					if res.Code != 3 || !strings.Contains(res.Stdout, "not a regular file") || !strings.Contains(res.Stdout, "\tto fix: ") {
						t.Errorf("custody doctor with a %s at state.db: want exit 3, a problem naming it not a regular file and its fix\n%s", kind, res)
					}
					continue
				}
				if res.Code != 1 || !strings.Contains(res.Stderr, "not a regular file") || !strings.Contains(res.Stderr, want) {
					t.Errorf("custody %s with a %s at state.db: want exit 1, %s naming it not a regular file\n%s", cmd, kind, want, res)
				}
			}
			if d := time.Since(start); d > 10*time.Second {
				t.Errorf("the refusals took %s; a non-regular state file must be refused at once", d)
			}
		})
	}
}

// leafWith returns the first leaf page of full holding marker.
func leafWith(t *testing.T, full []byte, pageSize int, marker string) int {
	t.Helper()
	for _, pg := range pageTypes(full, pageSize)["leaf"] {
		if bytes.Contains(full[pg*pageSize:(pg+1)*pageSize], []byte(marker)) {
			return pg
		}
	}
	t.Fatalf("no leaf page holds %q", marker)
	return 0
}

// TestDoctorSalvage damages one leaf page of the plans bucket and, in a
// second store, the journal's page: doctor names the damage and what each
// bucket still holds (exit 3) instead of only refusing the file; doctor
// --salvage keeps the damaged file byte for byte, writes a new store from
// everything readable (both worktree records survive, list works), reports
// what was lost, and journals the salvage; when no journal entry was lost
// the export still verifies against the new head.
func TestDoctorSalvage(t *testing.T) {
	t.Parallel()
	r, _, full := corpusStore(t)
	for _, tc := range []struct {
		name, marker string
		journalLost  bool
	}{
		{"plans page", `"pad":"ppp`, false},
		{"journal page", `"trigger":"create"`, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			rr := cloneRepo(t, r)
			st := filepath.Join(rr.Dir, ".git", "custody", "state.db")
			pg := leafWith(t, full, 4096, tc.marker)
			damaged := bytes.Clone(full)
			clear(damaged[pg*4096 : (pg+1)*4096])
			if err := os.WriteFile(st, damaged, 0o600); err != nil {
				t.Fatal(err)
			}
			res := runBounded(t, rr, "doctor")
			if res.Code != 3 || !strings.Contains(res.Stdout, fmt.Sprintf("page %d", pg)) || !strings.Contains(res.Stdout, "custody doctor --salvage") ||
				!strings.Contains(res.Stdout, "bucket records: 2 entries can still be read") {
				t.Fatalf("doctor on a store with a damaged %s: want exit 3 naming page %d, the readable buckets and the salvage\n%s", tc.name, pg, res)
			}
			res = runBounded(t, rr, "--json", "doctor", "--salvage")
			if res.Code != 3 {
				t.Fatalf("doctor --salvage: want exit 3 (something was lost)\n%s", res)
			}
			var env struct {
				Result struct {
					Damaged     string         `json:"damaged"`
					Kept        map[string]int `json:"kept"`
					Lost        []string       `json:"lost"`
					LostJournal []uint64       `json:"lost_journal"`
				} `json:"result"`
			}
			if err := json.Unmarshal([]byte(res.Stdout), &env); err != nil {
				t.Fatalf("doctor --salvage --json: %v\n%s", err, res)
			}
			rep := env.Result
			if kept, err := os.ReadFile(rep.Damaged); err != nil || !bytes.Equal(kept, damaged) {
				t.Fatalf("the damaged file is not kept byte for byte at %q (%v)", rep.Damaged, err)
			}
			if rep.Kept["records"] != 2 || len(rep.Lost) == 0 || (len(rep.LostJournal) > 0) != tc.journalLost {
				t.Fatalf("salvage report %+v: want both records kept, the damage named, journal entries lost: %t", rep, tc.journalLost)
			}
			if res := runBounded(t, rr, "list"); res.Code != 0 || !strings.Contains(res.Stdout, "kept-") || !strings.Contains(res.Stdout, "open-") {
				t.Fatalf("list after the salvage: want both trees\n%s", res)
			}
			if res := runBounded(t, rr, "doctor"); res.Code != 0 {
				t.Fatalf("doctor after the salvage: want OK (the salvage event accounts for what was lost)\n%s", res)
			}
			exp := runBounded(t, rr, "journal", "export")
			if !strings.Contains(exp.Stdout, `"event":"salvage"`) {
				t.Fatalf("the journal does not record the salvage:\n%s", exp.Stdout)
			}
			if !tc.journalLost {
				head := runBounded(t, rr, "--json", "journal", "head")
				var h struct {
					Result struct {
						Hash string `json:"hash"`
					} `json:"result"`
				}
				_ = json.Unmarshal([]byte(head.Stdout), &h)
				f := filepath.Join(t.TempDir(), "j.jsonl")
				if err := os.WriteFile(f, []byte(exp.Stdout), 0o600); err != nil {
					t.Fatal(err)
				}
				if res := runBounded(t, rr, "journal", "verify", "--head", h.Result.Hash, f); res.Code != 0 {
					t.Fatalf("the salvaged journal does not verify against its head %q\n%s", h.Result.Hash, res)
				}
			}
		})
	}
}
