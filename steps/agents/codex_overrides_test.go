package agents

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	toml "github.com/pelletier/go-toml/v2"
)

// The lines custody puts into a script, as they appear in a file.
const (
	cxSetup   = "custody adopt --if-needed && custody resource ensure"
	cxCleanup = "custody teardown"
)

// codexOutcomes is "key=outcome" for every key of an edit, in order.
func codexOutcomes(keys []CodexKey) []string {
	out := []string{}
	for _, k := range keys {
		out = append(out, k.Key+"="+k.Outcome)
	}
	return out
}

// TestCodexOverrides: every table the app runs is co-managed, whatever its
// shape. --merge puts custody's line into each darwin and linux override
// and the base script, never into win32; merging again changes nothing;
// --remove gives back the input byte for byte; and the output keeps the
// shape the app reads.
func TestCodexOverrides(t *testing.T) {
	t.Parallel()
	head := "version = 1\nname = \"shop\"\n"
	cases := []struct {
		name, src, want string
		outcomes        []string
		// removed is the file --remove makes of want: src, unless src
		// had custody's lines already.
		removed string
	}{
		{name: "an override for one platform only",
			src:      head + "[setup]\nscript = '''\nnpm ci\n'''\n[setup.linux]\nscript = '''\nsudo apt-get install -y jq\nnpm ci\n'''\n[cleanup]\nscript = \"custody teardown\"\n",
			want:     head + "[setup]\nscript = '''\n" + cxSetup + "\nnpm ci\n'''\n[setup.linux]\nscript = '''\n" + cxSetup + "\nsudo apt-get install -y jq\nnpm ci\n'''\n[cleanup]\nscript = \"custody teardown\"\n",
			outcomes: []string{"version=kept", "name=kept", "setup.script=merged", "setup.linux.script=merged", "cleanup.script=current"},
			removed:  head + "[setup]\nscript = '''\nnpm ci\n'''\n[setup.linux]\nscript = '''\nsudo apt-get install -y jq\nnpm ci\n'''\n[cleanup]\nscript = \"\"\n"},
		{name: "overrides for every platform, win32 left alone",
			src: head + "[setup]\nscript = \"npm ci\"\n[setup.darwin]\nscript = \"brew bundle\"\n[setup.linux]\nscript = \"apt-get install -y jq\"\n[setup.win32]\nscript = \"winget install jq\"\n" +
				"[cleanup]\nscript = \"make clean\"\n[cleanup.darwin]\nscript = \"brew services stop pg\"\n[cleanup.linux]\nscript = \"systemctl --user stop pg\"\n[cleanup.win32]\nscript = \"Stop-Service pg\"\n",
			want: head + "[setup]\nscript = \"" + cxSetup + "; npm ci\"\n[setup.darwin]\nscript = \"" + cxSetup + "; brew bundle\"\n[setup.linux]\nscript = \"" + cxSetup + "; apt-get install -y jq\"\n[setup.win32]\nscript = \"winget install jq\"\n" +
				"[cleanup]\nscript = \"custody teardown; make clean\"\n[cleanup.darwin]\nscript = \"custody teardown; brew services stop pg\"\n[cleanup.linux]\nscript = \"custody teardown; systemctl --user stop pg\"\n[cleanup.win32]\nscript = \"Stop-Service pg\"\n",
			outcomes: []string{"version=kept", "name=kept", "setup.script=merged", "setup.darwin.script=merged", "setup.linux.script=merged", "setup.win32.script=unmanaged",
				"cleanup.script=merged", "cleanup.darwin.script=merged", "cleanup.linux.script=merged", "cleanup.win32.script=unmanaged"}},
		{name: "overrides written as inline tables and dotted keys",
			src: head + "setup = { script = 'npm ci', linux = { script = 'make deps' } }\n[cleanup]\nscript = \"\"\ndarwin = { script = \"brew services stop pg\" } # mine\ncleanup.linux.script = 'x'\n",
			// cleanup.linux.script under [cleanup] is cleanup.cleanup.linux.script: not an override.
			want:     head + "setup = { script = '" + cxSetup + "; npm ci', linux = { script = '" + cxSetup + "; make deps' } }\n[cleanup]\nscript = \"custody teardown\"\ndarwin = { script = \"custody teardown; brew services stop pg\" } # mine\ncleanup.linux.script = 'x'\n",
			outcomes: []string{"version=kept", "name=kept", "setup.script=merged", "setup.linux.script=merged", "cleanup.script=added", "cleanup.darwin.script=merged"}},
		{name: "an override that already runs custody's line, anywhere in it",
			src:      head + "[setup]\nscript = \"" + cxSetup + "\"\n[setup.darwin]\nscript = '''\nbrew bundle\n" + cxSetup + "   \n'''\n[cleanup]\nscript = '''\nmake clean\n" + cxCleanup + "; echo done\n'''\n[cleanup.linux]\nscript = \"custody teardown\"\n",
			want:     head + "[setup]\nscript = \"" + cxSetup + "\"\n[setup.darwin]\nscript = '''\nbrew bundle\n" + cxSetup + "   \n'''\n[cleanup]\nscript = '''\nmake clean\n" + cxCleanup + "; echo done\n'''\n[cleanup.linux]\nscript = \"custody teardown\"\n",
			outcomes: []string{"version=kept", "name=kept", "setup.script=current", "setup.darwin.script=current", "cleanup.script=current", "cleanup.linux.script=current"},
			// The person's own placements come out as lines; an override
			// that is custody's line alone goes whole.
			removed: head + "[setup]\nscript = \"\"\n[setup.darwin]\nscript = '''\nbrew bundle\n   \n'''\n[cleanup]\nscript = '''\nmake clean\necho done\n'''\n"},
		{name: "crlf line ends, in the file and inside the scripts",
			src:      "version = 1\r\nname = \"shop\"\r\n[setup]\r\nscript = \"\"\"\r\nnpm ci\r\n\"\"\"\r\n[setup.linux]\r\nscript = '''\r\napt-get install -y jq'''\r\n",
			want:     "version = 1\r\nname = \"shop\"\r\n[setup]\r\nscript = \"\"\"\r\n" + cxSetup + "\r\nnpm ci\r\n\"\"\"\r\n[setup.linux]\r\nscript = '''\r\n" + cxSetup + "\r\napt-get install -y jq'''\r\n\r\n[cleanup]" + codexAddedMark + "\r\nscript = \"custody teardown\"\r\n",
			outcomes: []string{"version=kept", "name=kept", "setup.script=merged", "setup.linux.script=merged", "cleanup.script=added"}},
		{name: "a script with a trailing comment, in TOML and in the shell",
			src:      head + "[setup]\nscript = \"npm ci # deps\" # mine\n[setup.darwin]\nscript = '''brew bundle # tools'''   # also mine\n[cleanup]\nscript = '''\nmake clean # last line, no line end'''\n",
			want:     head + "[setup]\nscript = \"" + cxSetup + "; npm ci # deps\" # mine\n[setup.darwin]\nscript = '''" + cxSetup + "\nbrew bundle # tools'''   # also mine\n[cleanup]\nscript = '''\n" + cxCleanup + "\nmake clean # last line, no line end'''\n",
			outcomes: []string{"version=kept", "name=kept", "setup.script=merged", "setup.darwin.script=merged", "cleanup.script=merged"}},
		{name: "a #! line stays first",
			src:      head + "[setup]\nscript = '''\n#!/bin/bash\nset -euo pipefail\nnpm ci\n'''\n[setup.linux]\nscript = \"\"\"#!/bin/sh\"\"\"\n[cleanup]\nscript = '''#!/bin/sh\n'''\n",
			want:     head + "[setup]\nscript = '''\n#!/bin/bash\n" + cxSetup + "\nset -euo pipefail\nnpm ci\n'''\n[setup.linux]\nscript = \"\"\"#!/bin/sh\n" + cxSetup + "\"\"\"\n[cleanup]\nscript = '''#!/bin/sh\n" + cxCleanup + "\n'''\n",
			outcomes: []string{"version=kept", "name=kept", "setup.script=merged", "setup.linux.script=merged", "cleanup.script=merged"}},
		{name: "only an override's header implies the base table: it is added",
			src:      "version = 1\nname = \"shop\"\n\n[setup.linux]\nscript = 'make deps'\n",
			want:     "version = 1\nname = \"shop\"\n\n[setup.linux]\nscript = '" + cxSetup + "; make deps'\n\n[setup]" + codexAddedMark + "\nscript = \"" + cxSetup + "\"\n\n[cleanup]" + codexAddedMark + "\nscript = \"custody teardown\"\n",
			outcomes: []string{"version=kept", "name=kept", "setup.script=added", "setup.linux.script=merged", "cleanup.script=added"}},
		{name: "escapes and quotes in the person's script are kept as written",
			src:      head + "[setup]\nscript = \"printf '%s\\\\n' \\\"a b\\\"\\tx\"\n[setup.darwin]\nscript = \"\"\"\\\n   npm ci \\\n   --quiet\"\"\"\n[cleanup]\nscript = '''''quoted'' end'''\n",
			want:     head + "[setup]\nscript = \"" + cxSetup + "; printf '%s\\\\n' \\\"a b\\\"\\tx\"\n[setup.darwin]\nscript = \"\"\"" + cxSetup + "\n\\\n   npm ci \\\n   --quiet\"\"\"\n[cleanup]\nscript = '''" + cxCleanup + "\n''quoted'' end'''\n",
			outcomes: []string{"version=kept", "name=kept", "setup.script=merged", "setup.darwin.script=merged", "cleanup.script=merged"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			res, err := EditCodexEnvironment([]byte(c.src), "shop", CodexMerge)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(c.want, string(res.Out)); diff != "" {
				t.Errorf("merged file (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(c.outcomes, codexOutcomes(res.Keys)); diff != "" {
				t.Errorf("outcomes (-want +got):\n%s", diff)
			}
			codexAppContract(t, res.Out)

			again, err := EditCodexEnvironment(res.Out, "shop", CodexMerge)
			if err != nil {
				t.Fatalf("merging custody's own output: %v", err)
			}
			if len(again.Edits) != 0 {
				t.Errorf("a second merge changed the file:\n%s", cmp.Diff(string(res.Out), string(again.Out)))
			}
			if lacking := again.Lacking(); len(lacking) != 0 {
				t.Errorf("after a merge these tables still lack custody's line: %v", lacking)
			}

			removed, err := EditCodexEnvironment(res.Out, "shop", CodexRemove)
			if err != nil {
				t.Fatalf("removing: %v", err)
			}
			want := c.src
			if c.removed != "" {
				want = c.removed
			}
			if diff := cmp.Diff(want, string(removed.Out)); diff != "" {
				t.Errorf("remove does not give back the input (-want +got):\n%s", diff)
			}
			for _, k := range removed.Keys {
				if k.Outcome == "merged" || k.Outcome == "added" || k.Outcome == "current" {
					t.Errorf("remove left %s %s", k.Key, k.Outcome)
				}
			}
			gone, err := EditCodexEnvironment(removed.Out, "shop", CodexRemove)
			if err != nil || len(gone.Edits) != 0 {
				t.Errorf("a second remove changed the file (%v):\n%s", err, gone.Out)
			}
		})
	}
}

// TestCodexRemoveGivesBackTheBytes: whatever integrate or merge added is
// taken out again exactly, also what it added whole (a table, a script
// line under a header, custody's script in an empty one), and a file
// without custody's lines is left as it is.
func TestCodexRemoveGivesBackTheBytes(t *testing.T) {
	t.Parallel()
	for name, src := range map[string]string{
		"the app's file":                  codexAppFile,
		"empty scripts":                   "version = 1\nname = \"x\"\n[setup]\nscript = \"\" # none\n[cleanup]\nscript = '''\n'''\n",
		"a whitespace script":             "version = 1\nname = \"x\"\n[setup]\nscript = '  '\n[cleanup]\nscript = \"\"\"\n\n\"\"\"\n",
		"crlf file with the app's tables": "version = 1\r\nname = \"x\"\r\n\r\n[[actions]]\r\nname = \"Run\"\r\ncommand = \"npm start\"\r\n",
		"overrides only":                  "version = 1\nname = \"x\"\n\n[setup.darwin]\nscript = 'brew bundle'\n\n[cleanup.linux]\nscript = \"\"\"\nmake clean\n\"\"\"\n",
		"the person's lines around":       "version = 1\nname = \"x\"\n[setup]\nscript = '''\n\necho one\n\n'''\n[cleanup]\nscript = \"a; b\"\n",
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			for _, mode := range []CodexMode{CodexIntegrate, CodexMerge} {
				res, err := EditCodexEnvironment([]byte(src), "x", mode)
				if err != nil {
					t.Fatal(err)
				}
				removed, err := EditCodexEnvironment(res.Out, "x", CodexRemove)
				if err != nil {
					t.Fatalf("%v: removing: %v", mode, err)
				}
				if diff := cmp.Diff(src, string(removed.Out)); diff != "" {
					t.Errorf("%v then remove does not give back the input (-want +got):\n%s\nintegrated:\n%s", mode, diff, res.Out)
				}
			}
			res, err := EditCodexEnvironment([]byte(src), "x", CodexRemove)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(res.Out, []byte(src)) || len(res.Edits) != 0 {
				t.Errorf("remove changed a file without custody's lines:\n%s", res.Out)
			}
		})
	}

	// A script key custody put under the person's header cannot be told
	// from an empty one it filled: it stays, empty.
	res, err := EditCodexEnvironment([]byte("version = 1\nname = \"x\"\n[cleanup] # mine\nenv = 1\n"), "x", CodexIntegrate)
	if err != nil {
		t.Fatal(err)
	}
	if res, err = EditCodexEnvironment(res.Out, "x", CodexRemove); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff("version = 1\nname = \"x\"\n[cleanup] # mine\nscript = \"\"\nenv = 1\n", string(res.Out)); diff != "" {
		t.Errorf("remove under a header of the person's (-want +got):\n%s", diff)
	}

	// A whole new file comes back as the version and name custody wrote:
	// it cannot tell them from the person's, and the app requires them.
	fresh, err := EditCodexEnvironment(nil, "x", CodexIntegrate)
	if err != nil {
		t.Fatal(err)
	}
	removed, err := EditCodexEnvironment(fresh.Out, "x", CodexRemove)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff("version = 1\nname = \"x\"\n", string(removed.Out)); diff != "" {
		t.Errorf("remove of a new file (-want +got):\n%s", diff)
	}
	// An earlier custody's script is custody's too.
	earlier := "[setup]\nscript = 'custody resource ensure' # old\n"
	res, err = EditCodexEnvironment([]byte(earlier), "x", CodexRemove)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff("[setup]\nscript = '' # old\n", string(res.Out)); diff != "" {
		t.Errorf("remove of an earlier custody's script (-want +got):\n%s", diff)
	}
}

// TestCodexOwnScriptIsOffered: without --merge a script of the person's is
// left byte for byte, reported "own" with the merged script, and named by
// Lacking; an override counts as much as the base.
func TestCodexOwnScriptIsOffered(t *testing.T) {
	t.Parallel()
	src := "version = 1\nname = \"x\"\n[setup]\nscript = \"" + cxSetup + "\"\n[setup.linux]\nscript = '''\nsudo apt-get install -y jq\n'''\n[cleanup]\nscript = 'make clean'\n"
	res, err := EditCodexEnvironment([]byte(src), "x", CodexIntegrate)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(res.Out, []byte(src)) {
		t.Errorf("integrate changed a person's script:\n%s", res.Out)
	}
	if diff := cmp.Diff([]string{"setup.linux", "cleanup"}, res.Lacking()); diff != "" {
		t.Errorf("lacking (-want +got):\n%s", diff)
	}
	var merged []string
	for _, k := range res.Keys {
		merged = append(merged, k.Merged)
	}
	want := []string{"", "", "", cxSetup + "\nsudo apt-get install -y jq\n", cxCleanup + "; make clean"}
	if diff := cmp.Diff(want, merged); diff != "" {
		t.Errorf("merged scripts offered (-want +got):\n%s", diff)
	}
	// What is offered is exactly what --merge writes.
	m, err := EditCodexEnvironment([]byte(src), "x", CodexMerge)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Setup struct {
			Linux struct{ Script string }
		}
		Cleanup struct{ Script string }
	}
	if err := toml.Unmarshal(m.Out, &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Setup.Linux.Script != want[3] || doc.Cleanup.Script != want[4] {
		t.Errorf("--merge wrote %q and %q, not what was offered", doc.Setup.Linux.Script, doc.Cleanup.Script)
	}
}

// TestCodexScriptLines: custody's line put into a script of every form,
// decoded by the TOML library, is codexMerged's script; cut out again, the
// raw bytes are as they were; and only a line that is custody's counts.
func TestCodexScriptLines(t *testing.T) {
	t.Parallel()
	scripts := []string{"", " ", "npm ci", "npm ci\n", "\n", "\n\nx\n\n", "#!/bin/sh", "#!/bin/sh\n", "#!/bin/sh\nset -e\nmake", "a # c", "x;y"}
	for _, script := range scripts {
		for _, delim := range []string{`"`, `'`, `"""`, `'''`} {
			if len(delim) == 1 && strings.Contains(script, "\n") {
				continue
			}
			for _, lead := range []string{"", "\n"} {
				if len(delim) == 1 && lead != "" {
					continue
				}
				if len(delim) == 3 && lead == "" && strings.HasPrefix(script, "\n") {
					continue // TOML trims a line end right after the delimiter
				}
				raw := delim + lead + script + delim
				f, ok := codexForm(raw)
				if !ok {
					t.Fatalf("%s: no form", raw)
				}
				at, text := codexInsertAt(raw, f, cxCleanup, "\n")
				out := raw[:at] + text + raw[at:]
				var v struct{ S string }
				if err := toml.Unmarshal([]byte("S = "+out), &v); err != nil {
					t.Fatalf("%q: %v", out, err)
				}
				if want := codexMerged(script, cxCleanup, f.multiLine); v.S != want {
					t.Errorf("%q: decodes to %q, want %q", out, v.S, want)
				}
				if !codexRunsLine(v.S, cxCleanup) {
					t.Errorf("%q: custody's line is not found", v.S)
				}
				start, end := codexContent(out, f)
				from, to, ok := codexCut(out[start:end], cxCleanup)
				if back := out[:start+from] + out[start+to:]; !ok || back != raw {
					t.Errorf("%q: cut gives %q, want %q", out, back, raw)
				}
				if back, ok := codexUnmerged(v.S, cxCleanup); !ok || back != script {
					t.Errorf("%q: unmerged %q, want %q", v.S, back, script)
				}
			}
		}
	}
	for script, runs := range map[string]bool{
		cxCleanup:                      true,
		cxCleanup + "  ":               true,
		"a\n" + cxCleanup + "\r\nb":    true,
		cxCleanup + ";x":               true,
		" " + cxCleanup:                false,
		cxCleanup + " && x":            false,
		"echo " + cxCleanup:            false,
		cxCleanup + "-all":             false,
		"# " + cxCleanup:               false,
		"custody  teardown":            false,
		fmt.Sprintf("%q", cxCleanup):   false,
		strings.ToUpper(cxCleanup[:1]): false,
	} {
		if got := codexRunsLine(script, cxCleanup); got != runs {
			t.Errorf("codexRunsLine(%q) = %v, want %v", script, got, runs)
		}
	}
}

// codexAppContract checks out against the shape the Codex app reads, as
// its documentation and the files it writes show it: version an integer,
// name a non-empty string, [setup] a table with a string script, each
// platform override a table with a string script, [cleanup] (if any) a
// table with a string script. The npm package of the Codex client ships no
// reader of this file to run instead (the app that reads it is not
// published there).
func codexAppContract(t *testing.T, out []byte) {
	t.Helper()
	var doc map[string]any
	if err := toml.Unmarshal(out, &doc); err != nil {
		t.Fatalf("the file does not decode: %v\n%s", err, out)
	}
	if _, ok := doc["version"].(int64); !ok {
		t.Errorf("version is %T", doc["version"])
	}
	if n, _ := doc["name"].(string); n == "" {
		t.Errorf("name is %v", doc["name"])
	}
	for _, kind := range []string{"setup", "cleanup"} {
		v, ok := doc[kind]
		if !ok {
			if kind == "setup" {
				t.Errorf("no [setup]:\n%s", out)
			}
			continue
		}
		tb, ok := v.(map[string]any)
		if !ok {
			t.Errorf("%s is %T", kind, v)
			continue
		}
		if _, ok := tb["script"].(string); !ok {
			t.Errorf("%s.script is %T", kind, tb["script"])
		}
		for _, p := range []string{"darwin", "linux", "win32"} {
			if pv, ok := tb[p]; ok {
				if pt, ok := pv.(map[string]any); !ok {
					t.Errorf("%s.%s is %T", kind, p, pv)
				} else if _, ok := pt["script"].(string); !ok {
					t.Errorf("%s.%s.script is %T", kind, p, pt["script"])
				}
			}
		}
	}
}
