package machine

// SwitchBlock returns the refusal that keeps a shell from changing into
// rec's tree, or nil when it may: the record is not tombstoned and lstat
// says a directory, not a symbolic link, is at its path now (state, isDir
// and isSymlink, with pathErr when state is PathUnknown). The shell then
// stays where it is; custody path still prints the recorded path. It is
// pure.
func SwitchBlock(rec Record, state PathState, isDir, isSymlink bool, pathErr string) *Refusal {
	switch {
	case rec.State == StateTombstoned:
		return SwitchTombstonedRefusal(rec.ID, rec.Path)
	case state == PathUnknown:
		return SwitchPathUnknownRefusal(rec.ID, rec.Path, pathErr)
	case state == PathAbsent:
		return SwitchTreeGoneRefusal(rec.ID, rec.Path)
	case isSymlink || !isDir:
		return SwitchNotADirectoryRefusal(rec.ID, rec.Path)
	}
	return nil
}
