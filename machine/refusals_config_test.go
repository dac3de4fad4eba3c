package machine

import (
	"errors"
	"testing"
)

func TestRootRefusals(t *testing.T) {
	t.Parallel()
	const tail = "; set [worktree] root in custody.toml to a real directory"
	checkRefusals(t, []refusalCase{
		{"unresolved", RootUnresolvedRefusal("/w/wt", errors.New("EACCES")), &Refusal{Code: CodeUnsafeTarget, Path: "/w/wt", Retry: "custody init",
			Message: "the managed root /w/wt cannot be resolved: EACCES" + tail}},
		{"under a symlink", RootUnderSymlinkRefusal("/l/wt", "/l", "/real"), &Refusal{Code: CodeUnsafeTarget, Path: "/l/wt", Retry: "custody init",
			Message: "the managed root /l/wt lies under a symlink (/l resolves to /real); custody places worktrees only on a real path" + tail}},
		{"under a symlink, odd bytes escaped in the message only", RootUnderSymlinkRefusal("/l/w\x1bt", "/l", "/re\xffal"), &Refusal{Code: CodeUnsafeTarget, Path: "/l/w\x1bt",
			Retry: "custody init", Message: `the managed root /l/w\et lies under a symlink (/l resolves to /re\xffal); custody places worktrees only on a real path` + tail}},
		{"not excludable", RootNotExcludableRefusal("/w/repo/a\nb"), &Refusal{Code: CodeConfigInvalid, Path: "/w/repo/a\nb", Retry: "custody init",
			Message: `the managed root /w/repo/a\nb lies in the main checkout and its name holds a newline, which git's exclude file cannot name (one pattern a line), so git there would see every tree in it` +
				"; set [worktree] root in custody.toml to a directory whose name has none"}},
		{"not a directory", RootNotDirectoryRefusal("/w/wt\t"), &Refusal{Code: CodeSymlink, Path: "/w/wt\t", Retry: "custody init",
			Message: `the managed root /w/wt\t is a symlink or not a directory; custody places worktrees only under a real directory: move it aside, or set [worktree] root in custody.toml`}},
	})
}

func TestExcludeRefusals(t *testing.T) {
	t.Parallel()
	const (
		path = "/r/.git/info/exclude"
		line = "/.worktrees/"
	)
	notRegular := errors.New(path + " is not a regular file")
	checkRefusals(t, []refusalCase{
		{"directory", ExcludeDirRefusal(path, line, errors.New("/r/.git/info is not a directory")), &Refusal{Code: CodeUnsafeTarget, Path: path, Retry: "custody doctor",
			Message: "custody adds /.worktrees/ to git's exclude file, but /r/.git/info is not a directory; make it a directory of the git directory's own"}},
		{"a link that cannot be followed", ExcludeLinkRefusal(path, line, notRegular), &Refusal{Code: CodeUnsafeTarget, Path: path,
			Retry:   "make " + path + " a regular file, then run the command again",
			Message: "custody adds /.worktrees/ to git's exclude file, but " + path + " is not a regular file; custody writes nothing through it"}},
		{"a link elsewhere", ExcludeLinkedRefusal(path, line, "/home/u/my exclude", notRegular), &Refusal{Code: CodeUnsafeTarget, Path: path,
			Retry: `printf '%s\n' /.worktrees/ >> '/home/u/my exclude'`,
			Message: "custody adds /.worktrees/ to git's exclude file, but " + path + " is not a regular file (to /home/u/my exclude); custody writes nothing through a link under the git directory: " +
				"add the line to /home/u/my exclude yourself, or make the link a regular file"}},
		{"not regular, a path to quote", ExcludeNotRegularRefusal("/r a/.git/info/exclude", line, errors.New("not a regular file")), &Refusal{Code: CodeUnsafeTarget,
			Path: "/r a/.git/info/exclude", Retry: "make '/r a/.git/info/exclude' a regular file, then run the command again",
			Message: "custody adds /.worktrees/ to git's exclude file, but not a regular file"}},
	})
}

func TestConfigUntrustedRefusal(t *testing.T) {
	t.Parallel()
	const digest = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	const tail = " declares resource commands that were never approved in this content; nothing was run or made: read it, then approve it with custody trust"
	checkRefusals(t, []refusalCase{
		{"a file", ConfigUntrustedRefusal("/w/repo/custody.toml", digest), &Refusal{Code: CodeConfigUntrusted, Path: "/w/repo/custody.toml", Retry: "custody trust",
			Message: "/w/repo/custody.toml (sha256 " + digest + ")" + tail}},
		{"no path, no digest", ConfigUntrustedRefusal("", ""), &Refusal{Code: CodeConfigUntrusted, Path: ConfigFile, Retry: "custody trust",
			Message: ConfigFile + " (sha256 unknown)" + tail}},
		{"a path with a newline", ConfigUntrustedRefusal("/w/a\nb/custody.toml", digest), &Refusal{Code: CodeConfigUntrusted, Path: "/w/a\nb/custody.toml", Retry: "custody trust",
			Message: `/w/a\nb/custody.toml (sha256 ` + digest + ")" + tail}},
	})
}

func TestSignatureRefusals(t *testing.T) {
	t.Parallel()
	const head = "abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789"
	const tail = ". The export may have been changed or cut short after it was signed, or signed by someone not in /k/allowed; compare the export's head ("
	const ask = ") with the signer's `custody journal head` and ask them to sign again with custody journal sign"
	checkRefusals(t, []refusalCase{
		{"empty journal", SignEmptyJournalRefusal("/k/id"), &Refusal{Code: CodeSignatureInvalid, Path: "/k/id", Retry: "custody journal head",
			Message: "the journal is empty: there is no head to sign yet"}},
		{"sign failed, a key to quote", SignFailedRefusal("/k/my key", errors.New("exit status 255")), &Refusal{Code: CodeSignatureInvalid, Path: "/k/my key",
			Retry:   "custody journal sign -o journal.sig --key '/k/my key'",
			Message: "ssh-keygen could not sign the journal head with the key /k/my key (exit status 255); check that it is an SSH private key you can read, then sign again"}},
		{"unknown signer", SignatureUnknownSignerRefusal("/w/j.sig", "/k/allowed", head), &Refusal{Code: CodeSignatureInvalid, Path: "/w/j.sig", Retry: "custody journal head",
			Message: "the signature /w/j.sig does not vouch for this journal: no allowed signer made it" + tail + "abcdef0123456789" + ask}},
		{"other head, empty export", SignatureOtherHeadRefusal("/w/j.sig", "/k/allowed", ""), &Refusal{Code: CodeSignatureInvalid, Path: "/w/j.sig", Retry: "custody journal head",
			Message: "the signature /w/j.sig does not vouch for this journal: it was made over another head than the one the export ends at" + tail + "(empty)" + ask}},
	})
}
