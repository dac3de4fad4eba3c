package steps

// Failpoints lists every named point at which a `failpoint` build of custody
// can be killed (CUSTODY_FAILPOINT=<name> sends SIGKILL to the process there).
// Crash tests loop over this list.
func Failpoints() []string {
	return []string{
		"new/after-intent",
		"new/after-add",
		"new/after-marker",
		"new/before-complete",
		"apply/after-intent",
		"apply/after-quarantine",
		"apply/during-delete",
		"apply/after-remove",
		"apply/after-branch",
		"apply/before-complete",
		"resource/after-create-intent",
		"resource/after-destroy-intent",
		"resource/after-mirror",
		"resource/gone-after-intent",
		"resource/gone-after-destroy",
		"archive/after-intent",
		"archive/after-patch",
		"archive/after-manifest",
		"archive/after-rename",
		"archive/before-seal",
		"archive/prune-after-intent",
		"archive/prune-during-delete",
		"archive/strip-after-intent",
		"archive/strip-after-scratch",
		"archive/strip-after-patch",
		"archive/strip-after-manifest",
		"relocate/after-intent",
		"relocate/after-move",
		"apply/after-aside",
		"sweep/after-intent",
		"sweep/during-discard",
		"land/after-intent",
		"land/after-push",
		"land/after-landed",
	}
}

// PausePoints lists every named point at which a `failpoint` build of
// custody can be held (CUSTODY_PAUSE=<name>, CUSTODY_PAUSE_DIR=<dir>) while
// another invocation runs.
func PausePoints() []string {
	return []string{"new/after-intent", "apply/before-observe", "apply/after-intent", "apply/before-quarantine", "apply/after-quarantine", "apply/after-remove", "relocate/before-move", "apply/during-check", "apply/during-delete", "sweep/before-snapshot", "sweep/before-recheck", "land/before-push"}
}
