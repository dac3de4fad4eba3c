//go:build unix

package clitest

// RunScripts runs the CLI scripts of a test package, its
// testdata/script/*.txtar, with testscript
// (github.com/rogpeppe/go-internal/testscript), one behaviour per file,
// named <command>_<case>.txtar. The scripts live in the packages of
// cmd/custody/e2e/scripts by feature; `go test
// ./cmd/custody/e2e/scripts/plan -run TestScripts/plan_output_fifo` runs
// one; `-update` rewrites the files a failing `cmp` compares against
// (inspect the diff before committing it).
//
// Every script starts in an empty $WORK with a deterministic git: fixed
// author, committer and date (so commit hashes are pinned), HOME=/no-home,
// XDG_STATE_HOME=$WORK/.tmp/xdg-state (where init records the repository),
// no global or system configuration, LC_ALL=C, TZ=UTC; the custody binary
// Main built comes first on PATH, so `exec custody ...` runs it too. Besides testscript's own commands (exec, stdout, stderr, cmp,
// exists, symlink, cd, env, ...) the scripts have:
//
//	custody [-exit=N] ARGS...
//	    Runs the custody binary with ARGS in the script's current directory
//	    and environment. Its stdout and stderr become the ones `stdout`,
//	    `stderr` and `capture` match. The script fails unless custody exited
//	    with N (default 0; N is 0, 1, 2 or 3, docs/exit-codes.md), custody
//	    panicked, or it failed with --json and still printed on stdout.
//	    `! custody` is an error: the exit code is part of the contract, so
//	    say which one with -exit.
//
//	capture NAME REGEXP [stdout|stderr]
//	    Sets the environment variable NAME to the first submatch of REGEXP
//	    (multi-line mode, as `stdout` matches) in the last command's stdout
//	    (default) or stderr, and fails if REGEXP does not match. For the
//	    random worktree ids: `custody new fix` then
//	    `capture ID '/(fix-[0-9a-f]{6})$'`.
//
//	repo NAME
//	    Makes the common starting point: a git repository $WORK/NAME with
//	    one commit ("initial", a README) on main, and a bare repository
//	    $WORK/NAME-origin.git registered as its origin, with main pushed.
//	    It does not run custody init.
//
//	filetype PATH TYPE [LINK]
//	    Fails unless PATH, not followed, is of TYPE: regular, symlink,
//	    directory, fifo, chardev or socket; for a symlink, LINK is the
//	    target it must hold. With !, fails if PATH is of TYPE.
//
//	mkfifo PATH
//	    Makes a FIFO (named pipe) at PATH.
//
//	absent PATH...
//	    Fails unless lstat says each PATH does not exist (ENOENT): nothing
//	    is there, not even a dangling symlink, which testscript's
//	    `! exists` (it follows links) would let pass. Removal is verified
//	    this way (DESIGN §1.5).
//
//	chardev PATH
//	    Makes a character device at PATH equal to /dev/null (mknod c 1 3;
//	    it needs root, the case it is for).
//
//	jsonpath SOURCE PATH [WANT]
//	    Reads SOURCE (stdout, stderr or a file), which must hold exactly one
//	    JSON value, and looks up PATH in it: members separated by dots,
//	    [N] for the Nth element of an array, [KEY=VALUE] for the one element
//	    of an array of objects whose member KEY is VALUE, len() for the
//	    length of an array or object: result.items[id=$ID].refusal.code,
//	    result.items.len(). Without WANT it fails unless PATH is there
//	    (with !, if it is: a member omitted, or below a null). With WANT it
//	    fails unless the value's text matches the regular expression WANT
//	    as a whole (\A(?:WANT)\z): a string's text is the string itself,
//	    any other value's is its compact JSON (null, [], 2, {"a":1}). With
//	    !, it fails if PATH is there and matches. (Quote a WANT holding #
//	    or spaces: testscript ends a line at an unquoted #.)
//
//	snapshot DIR... FILE
//	    Writes to FILE one line for every entry below each DIR, links not
//	    followed, in lexical order: its path (DIR as given, then the path
//	    below it), its type and mode, and a file's sha256 or a link's
//	    target. Two snapshots compared with cmp assert that nothing below
//	    the DIRs changed (as fixtures.Snap does for the Go tests);
//	    timestamps do not count, nor does the state file's walk stamp
//	    (.git/custody/state.db.checked, a cache: decision 0264).
//
//	boltput FILE BUCKET KEY VALUE
//	    Puts KEY=VALUE into BUCKET of the bbolt file FILE (a state.db), for
//	    states no custody command makes, e.g. a schema from a newer custody:
//	    boltput .git/custody/state.db meta schema 99.
//
//	planedit [-seal] FILE ID MEMBER=JSON...
//	    Sets members of plan item ID in the plan file FILE to the JSON
//	    values (null removes an optional member) and writes the plan back
//	    indented, as a person editing it by hand would; its plan_id then no
//	    longer matches. With -seal it also recomputes plan_id
//	    (machine.Seal), as a forger who knows the format would, so the file
//	    parses and only apply's fresh assessment can refuse it.
//
// and the condition:
//
//	[dev-writable]
//	    The directory holding /dev/null is writable by this process (root):
//	    a broken custody could replace the machine's /dev/null there, so a
//	    script that writes "to /dev/null" uses a chardev of its own instead.

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/custody-sh/custody/cmd/custody/internal/output"
	"github.com/custody-sh/custody/fixtures"
	"github.com/custody-sh/custody/machine"
	json "github.com/custody-sh/custody/machine/bytejson"
	"github.com/rogpeppe/go-internal/testscript"
	bolt "go.etcd.io/bbolt"
)

// RunScripts runs dir's scripts (see the package's script commands above),
// rewriting what a failing cmp compares against when update is set.
func RunScripts(t *testing.T, dir string, update bool) {
	t.Helper()
	testscript.Run(t, testscript.Params{
		Dir:                 dir,
		Setup:               scriptSetup,
		Cmds:                scriptCmds(scriptStarter()),
		Condition:           scriptCondition,
		RequireExplicitExec: true,
		RequireUniqueNames:  true,
		UpdateScripts:       update,
	})
}

// scriptDate is every commit's author and committer date: with the fixed
// names below, the same content always gets the same hash.
const scriptDate = "2026-01-01T00:00:00Z"

// scriptSetup gives every script the custody binary first on PATH and a
// deterministic git, as fixtures.Repo.Env does for the Go tests.
func scriptSetup(env *testscript.Env) error {
	path := filepath.Dir(custodyBin) + string(os.PathListSeparator) + env.Getenv("PATH")
	host, _ := os.Hostname()
	env.Setenv("PATH", path)
	for _, kv := range scriptGitEnv() {
		env.Setenv(kv[0], kv[1])
	}
	env.Setenv("HOSTNAME", host) // what journal export --redact replaces with $HOST
	// The user-level index of repositories custody init records in (list
	// --all-repos): in the script's own directory, never a real home.
	env.Setenv("XDG_STATE_HOME", filepath.Join(env.WorkDir, ".tmp", "xdg-state"))
	// The failpoint build, for scripts that kill a run at a named point.
	env.Setenv("CUSTODY_FAILPOINT_BIN", failpointBin)
	return nil
}

// scriptGitEnv is the deterministic environment of every script's git.
// A script's own git starts none of git's housekeeping (git maintenance
// run --auto after a commit, gc --auto after a fetch): it never has
// anything to do in a script's few objects, and it cost a process after
// every commit. Custody's git never sees these settings: custody replaces
// configuration passed in the environment with its own (hostio.gitEnv).
func scriptGitEnv() [][2]string {
	return [][2]string{
		{"HOME", "/no-home"},
		{"GIT_CONFIG_GLOBAL", os.DevNull},
		{"GIT_CONFIG_NOSYSTEM", "1"},
		{"GIT_CONFIG_COUNT", "2"},
		{"GIT_CONFIG_KEY_0", "maintenance.auto"}, {"GIT_CONFIG_VALUE_0", "false"},
		{"GIT_CONFIG_KEY_1", "gc.auto"}, {"GIT_CONFIG_VALUE_1", "0"},
		{"GIT_AUTHOR_NAME", "Fixture"}, {"GIT_AUTHOR_EMAIL", "fixture@example.com"}, {"GIT_AUTHOR_DATE", scriptDate},
		{"GIT_COMMITTER_NAME", "Fixture"}, {"GIT_COMMITTER_EMAIL", "fixture@example.com"}, {"GIT_COMMITTER_DATE", scriptDate},
		{"LC_ALL", "C"}, {"TZ", "UTC"},
	}
}

// scriptCondition answers the conditions testscript does not know.
func scriptCondition(cond string) (bool, error) {
	switch cond {
	case "dev-writable":
		return syscall.Access(filepath.Dir(os.DevNull), 2 /* W_OK */) == nil, nil
	}
	return false, fmt.Errorf("unknown condition %q", cond)
}

// scriptCmds are the custom commands documented at the top of this file.
func scriptCmds(starter *fixtures.Starter) map[string]func(ts *testscript.TestScript, neg bool, args []string) {
	return map[string]func(ts *testscript.TestScript, neg bool, args []string){
		"custody":  scriptCustody,
		"capture":  scriptCapture,
		"repo":     func(ts *testscript.TestScript, neg bool, args []string) { scriptRepo(ts, neg, args, starter) },
		"filetype": scriptFiletype,
		"jsonpath": scriptJSONPath,
		"snapshot": scriptSnapshot,
		"boltput":  scriptBoltPut,
		"planedit": scriptPlanEdit,
		"absent":   scriptAbsent,
		"mkfifo": func(ts *testscript.TestScript, neg bool, args []string) {
			scriptNoNeg(ts, neg, "mkfifo")
			if len(args) != 1 {
				ts.Fatalf("usage: mkfifo PATH")
			}
			ts.Check(syscall.Mkfifo(ts.MkAbs(args[0]), 0o644))
		},
		"chardev": func(ts *testscript.TestScript, neg bool, args []string) {
			scriptNoNeg(ts, neg, "chardev")
			if len(args) != 1 {
				ts.Fatalf("usage: chardev PATH")
			}
			ts.Check(syscall.Mknod(ts.MkAbs(args[0]), syscall.S_IFCHR|0o666, 1<<8|3))
		},
	}
}

func scriptNoNeg(ts *testscript.TestScript, neg bool, name string) {
	if neg {
		ts.Fatalf("%s does not take !", name)
	}
}

// scriptCustody is `custody [-exit=N] ARGS...`.
func scriptCustody(ts *testscript.TestScript, neg bool, args []string) {
	if neg {
		ts.Fatalf("use custody -exit=N instead of ! custody: the exit code (1 error, 2 planned, 3 refused or pending) is part of the contract")
	}
	want := 0
	if len(args) > 0 && strings.HasPrefix(args[0], "-exit=") {
		n, err := strconv.Atoi(strings.TrimPrefix(args[0], "-exit="))
		if err != nil || n < 0 || n > 3 {
			ts.Fatalf("custody %s: the exit code must be 0, 1, 2 or 3", args[0])
		}
		want, args = n, args[1:]
	}
	err := ts.Exec(custodyBin, args...)
	got := 0
	if ee, ok := err.(*exec.ExitError); ok {
		got = ee.ExitCode()
	} else if err != nil {
		ts.Fatalf("run custody: %v", err)
	}
	line := strings.Join(args, " ")
	if stderr := ts.ReadFile("stderr"); strings.Contains(stderr, "panic:") || strings.Contains(stderr, "goroutine ") {
		ts.Fatalf("custody %s panicked", line)
	}
	if got != want {
		ts.Fatalf("custody %s: exit %d, want %d", line, got, want)
	}
	for _, a := range args {
		if a == "--" {
			break
		}
		if a == "--json" && got == output.ExitError && ts.ReadFile("stdout") != "" {
			ts.Fatalf("custody %s failed with --json but printed on stdout: the error envelope goes to stderr alone", line)
		}
	}
}

// scriptCapture is `capture NAME REGEXP [stdout|stderr]`.
func scriptCapture(ts *testscript.TestScript, neg bool, args []string) {
	scriptNoNeg(ts, neg, "capture")
	if len(args) < 2 || len(args) > 3 || (len(args) == 3 && args[2] != "stdout" && args[2] != "stderr") {
		ts.Fatalf("usage: capture NAME REGEXP [stdout|stderr]")
	}
	from := "stdout"
	if len(args) == 3 {
		from = args[2]
	}
	re, err := regexp.Compile("(?m)" + args[1])
	if err != nil {
		ts.Fatalf("capture: %v", err)
	}
	if re.NumSubexp() == 0 {
		ts.Fatalf("capture: %s has no (submatch) to capture", args[1])
	}
	m := re.FindStringSubmatch(ts.ReadFile(from))
	if m == nil {
		ts.Fatalf("capture %s: no match for %#q in %s", args[0], args[1], from)
	}
	ts.Setenv(args[0], m[1])
	ts.Logf("%s=%s", args[0], m[1])
}

// scriptRepo is `repo NAME`: a copy of the starter scriptStarter built.
func scriptRepo(ts *testscript.TestScript, neg bool, args []string, starter *fixtures.Starter) {
	scriptNoNeg(ts, neg, "repo")
	if len(args) != 1 {
		ts.Fatalf("usage: repo NAME")
	}
	dir := filepath.Join(ts.Getenv("WORK"), args[0])
	ts.Check(starter.Write(dir, dir+"-origin.git"))
}

// scriptStarter is the repository `repo NAME` copies, which git builds
// once per run of the scripts with a script's own environment
// (scriptSetup): a checkout with one commit ("initial", a README) on
// main, and a bare origin with main pushed.
func scriptStarter() *fixtures.Starter {
	return fixtures.NewStarter(func(root string) error {
		env := []string{"PATH=" + os.Getenv("PATH")}
		for _, kv := range scriptGitEnv() {
			env = append(env, kv[0]+"="+kv[1])
		}
		dir, origin := filepath.Join(root, "repo"), filepath.Join(root, "origin.git")
		git := func(args ...string) error {
			if out, err := gitTool(env, args...); err != nil {
				return fmt.Errorf("git %s: %w\n%s", strings.Join(args, " "), err, out)
			}
			return nil
		}
		if err := git("init", "-q", "--bare", "-b", "main", origin); err != nil {
			return err
		}
		if err := git("init", "-q", "-b", "main", dir); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, "README"), []byte("fixture\n"), 0o644); err != nil {
			return err
		}
		for _, args := range [][]string{
			{"-C", dir, "add", "README"},
			{"-C", dir, "commit", "-q", "-m", "initial"},
			{"-C", dir, "remote", "add", "origin", origin},
			{"-C", dir, "push", "-q", "origin", "main"},
		} {
			if err := git(args...); err != nil {
				return err
			}
		}
		// A push to the origin starts no `git gc --auto` in it: scripts
		// and custody push often, and that process never has anything to
		// do here.
		return fixtures.NoReceiveGC(origin)
	})
}

// scriptFiletype is `filetype PATH TYPE [LINK]`.
func scriptFiletype(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) < 2 || len(args) > 3 || (len(args) == 3 && args[1] != "symlink") {
		ts.Fatalf("usage: filetype PATH regular|symlink|directory|fifo|chardev|socket (or: filetype PATH symlink LINK)")
	}
	fi, err := os.Lstat(ts.MkAbs(args[0]))
	ts.Check(err)
	var got string
	switch m := fi.Mode(); {
	case m.IsRegular():
		got = "regular"
	case m&fs.ModeSymlink != 0:
		got = "symlink"
	case m.IsDir():
		got = "directory"
	case m&fs.ModeNamedPipe != 0:
		got = "fifo"
	case m&fs.ModeCharDevice != 0:
		got = "chardev"
	case m&fs.ModeSocket != 0:
		got = "socket"
	default:
		got = m.Type().String()
	}
	switch {
	case neg && got == args[1]:
		ts.Fatalf("%s is a %s", args[0], got)
	case !neg && got != args[1]:
		ts.Fatalf("%s is a %s, want %s", args[0], got, args[1])
	case !neg && len(args) == 3:
		link, err := os.Readlink(ts.MkAbs(args[0]))
		ts.Check(err)
		if link != args[2] {
			ts.Fatalf("%s points at %s, want %s", args[0], link, args[2])
		}
	}
}

// scriptAbsent is `absent PATH...`.
func scriptAbsent(ts *testscript.TestScript, neg bool, args []string) {
	scriptNoNeg(ts, neg, "absent")
	if len(args) == 0 {
		ts.Fatalf("usage: absent PATH...")
	}
	for _, a := range args {
		fi, err := os.Lstat(ts.MkAbs(a))
		switch {
		case err == nil:
			ts.Fatalf("%s is there (%v), want nothing", a, fi.Mode())
		case !errors.Is(err, fs.ErrNotExist):
			ts.Fatalf("lstat %s: %v, want ENOENT", a, err)
		}
	}
}

// scriptJSONPath is `jsonpath SOURCE PATH [WANT]`.
func scriptJSONPath(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) < 2 || len(args) > 3 {
		ts.Fatalf("usage: jsonpath stdout|stderr|FILE PATH [WANT]")
	}
	src, path := args[0], args[1]
	text := ""
	switch src {
	case "stdout", "stderr":
		text = ts.ReadFile(src)
	default:
		b, err := os.ReadFile(ts.MkAbs(src))
		ts.Check(err)
		text = string(b)
	}
	dec := json.NewDecoder(strings.NewReader(text))
	dec.UseNumber()
	var doc any
	if err := dec.Decode(&doc); err != nil {
		ts.Fatalf("jsonpath: %s is not JSON: %v", src, err)
	}
	if err := dec.Decode(new(json.RawMessage)); err != io.EOF {
		ts.Fatalf("jsonpath: %s holds more than one JSON value", src)
	}
	v, ok, err := jsonLookup(doc, path)
	if err != nil {
		ts.Fatalf("jsonpath %s: %v", path, err)
	}
	if len(args) == 2 {
		switch {
		case neg && ok:
			ts.Fatalf("jsonpath: %s has %s: %s", src, path, jsonText(v))
		case !neg && !ok:
			ts.Fatalf("jsonpath: %s has no %s", src, path)
		}
		return
	}
	if !ok {
		ts.Fatalf("jsonpath: %s has no %s", src, path)
	}
	re, err := regexp.Compile(`\A(?:` + args[2] + `)\z`)
	if err != nil {
		ts.Fatalf("jsonpath: %v", err)
	}
	got := jsonText(v)
	switch {
	case neg && re.MatchString(got):
		ts.Fatalf("jsonpath: %s %s is %s, matching %#q", src, path, got, args[2])
	case !neg && !re.MatchString(got):
		ts.Fatalf("jsonpath: %s %s is %s, want %#q", src, path, got, args[2])
	}
}

// jsonLookup follows path (see jsonpath) from v; ok is false when a member,
// element or match is not there.
func jsonLookup(v any, path string) (_ any, ok bool, _ error) {
	for path != "" {
		var step string
		switch {
		case path[0] == '[':
			end := strings.IndexByte(path, ']')
			if end < 0 {
				return nil, false, fmt.Errorf("no ] after %s", path)
			}
			step, path = path[:end+1], path[end+1:]
		default:
			end := strings.IndexAny(path, ".[")
			if end < 0 {
				end = len(path)
			}
			step, path = path[:end], path[end:]
		}
		path = strings.TrimPrefix(path, ".")
		if v == nil {
			return nil, false, nil // below a null
		}
		switch {
		case step == "":
			return nil, false, errors.New("an empty member name (a dot too many?)")
		case step == "len()":
			switch c := v.(type) {
			case []any:
				v = json.Number(strconv.Itoa(len(c)))
			case map[string]any:
				v = json.Number(strconv.Itoa(len(c)))
			default:
				return nil, false, fmt.Errorf("len() of %s, which is neither an array nor an object", jsonText(v))
			}
		case strings.HasPrefix(step, "["):
			a, isArray := v.([]any)
			if !isArray {
				return nil, false, fmt.Errorf("%s of %s, which is not an array", step, jsonText(v))
			}
			sel := step[1 : len(step)-1]
			if key, want, isMatch := strings.Cut(sel, "="); isMatch {
				var found []any
				for _, e := range a {
					if m, isObject := e.(map[string]any); isObject && m[key] != nil && jsonText(m[key]) == want {
						found = append(found, e)
					}
				}
				if len(found) > 1 {
					return nil, false, fmt.Errorf("%d elements match %s", len(found), step)
				}
				if len(found) == 0 {
					return nil, false, nil
				}
				v = found[0]
				continue
			}
			n, err := strconv.Atoi(sel)
			if err != nil || n < 0 {
				return nil, false, fmt.Errorf("%s is neither [N] nor [KEY=VALUE]", step)
			}
			if n >= len(a) {
				return nil, false, nil
			}
			v = a[n]
		default:
			m, isObject := v.(map[string]any)
			if !isObject {
				return nil, false, fmt.Errorf("member %s of %s, which is not an object", step, jsonText(v))
			}
			if v, ok = m[step]; !ok {
				return nil, false, nil
			}
		}
	}
	return v, true, nil
}

// jsonText is a string's text, or any other value's compact JSON.
func jsonText(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// scriptSnapshot is `snapshot DIR... FILE`.
func scriptSnapshot(ts *testscript.TestScript, neg bool, args []string) {
	scriptNoNeg(ts, neg, "snapshot")
	if len(args) < 2 {
		ts.Fatalf("usage: snapshot DIR... FILE")
	}
	var b strings.Builder
	for _, arg := range args[:len(args)-1] {
		dir := ts.MkAbs(arg)
		err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(dir, p)
			name := filepath.Join(arg, rel)
			if fixtures.IsWalkStamp(p) {
				return nil // a cache any command that reads may write (0264)
			}
			fi, err := d.Info()
			if err != nil {
				return err
			}
			switch m := fi.Mode(); {
			case m&fs.ModeSymlink != 0:
				link, err := os.Readlink(p)
				if err != nil {
					return err
				}
				fmt.Fprintf(&b, "%q link %q\n", name, link)
			case m.IsDir():
				fmt.Fprintf(&b, "%q dir %v\n", name, m.Perm())
			case m.IsRegular():
				data, err := os.ReadFile(p)
				if err != nil {
					return err
				}
				fmt.Fprintf(&b, "%q file %v %x\n", name, m.Perm(), sha256.Sum256(data))
			default:
				fmt.Fprintf(&b, "%q %v\n", name, m)
			}
			return nil
		})
		ts.Check(err)
	}
	ts.Check(os.WriteFile(ts.MkAbs(args[len(args)-1]), []byte(b.String()), 0o644))
}

// scriptBoltPut is `boltput FILE BUCKET KEY VALUE`.
func scriptBoltPut(ts *testscript.TestScript, neg bool, args []string) {
	scriptNoNeg(ts, neg, "boltput")
	if len(args) != 4 {
		ts.Fatalf("usage: boltput FILE BUCKET KEY VALUE")
	}
	db, err := bolt.Open(ts.MkAbs(args[0]), 0o600, &bolt.Options{Timeout: 5 * time.Second})
	ts.Check(err)
	defer db.Close()
	ts.Check(db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket([]byte(args[1]))
		if b == nil {
			return fmt.Errorf("%s has no bucket %s", args[0], args[1])
		}
		return b.Put([]byte(args[2]), []byte(args[3]))
	}))
	ts.Check(db.Close())
}

// scriptPlanEdit is `planedit [-seal] FILE ID MEMBER=JSON...`.
func scriptPlanEdit(ts *testscript.TestScript, neg bool, args []string) {
	scriptNoNeg(ts, neg, "planedit")
	seal := len(args) > 0 && args[0] == "-seal"
	if seal {
		args = args[1:]
	}
	if len(args) < 3 {
		ts.Fatalf("usage: planedit [-seal] FILE ID MEMBER=JSON...")
	}
	file := ts.MkAbs(args[0])
	b, err := os.ReadFile(file)
	ts.Check(err)
	var doc map[string]any
	ts.Check(json.Unmarshal(b, &doc))
	items, _ := doc["items"].([]any)
	edited := 0
	for _, it := range items {
		m, _ := it.(map[string]any)
		if m == nil || m["id"] != args[1] {
			continue
		}
		for _, kv := range args[2:] {
			k, v, ok := strings.Cut(kv, "=")
			if !ok {
				ts.Fatalf("planedit: %s is not MEMBER=JSON", kv)
			}
			var val any
			if err := json.Unmarshal([]byte(v), &val); err != nil {
				ts.Fatalf("planedit: %s: %v", kv, err)
			}
			m[k] = val
		}
		edited++
	}
	if edited != 1 {
		ts.Fatalf("planedit: %s has %d items %s, want 1", args[0], edited, args[1])
	}
	b, err = json.MarshalIndent(doc, "", "  ")
	ts.Check(err)
	if seal {
		var p machine.Plan
		ts.Check(json.Unmarshal(b, &p))
		b, err = json.MarshalIndent(machine.Seal(p), "", "  ")
		ts.Check(err)
	}
	ts.Check(os.WriteFile(file, append(b, '\n'), 0o644))
}
