package main

import (
	"reflect"

	"github.com/alecthomas/kong"
)

// access is what a command does to the repository it runs in. Every
// command declares it here, once, by its type; run reads the declaration
// once, before the command starts, and env opens the state file by it
// (docs/decisions/0228-read-only-repositories.md). A command that declares
// nothing counts as one that writes, and TestEveryCommandDeclaresAccess
// makes every command declare.
type access int

const (
	// writes: the command changes the repository (its custody state, git's
	// worktree registry, refs or files of its checkouts). env first checks
	// that the state directory's file system can be written, and refuses
	// with read-only-file-system before anything is written when it cannot;
	// mutatingEnv then resumes every interrupted intent.
	writes access = iota
	// reads: the command only reads the repository. env opens the state
	// file read-only (a shared lock, bbolt ReadOnly) and never creates it,
	// nothing resumes (interrupted intents are mentioned on stderr), and no
	// file of the repository is created or written, except derived data
	// (the content hash cache, objects a proof needs) where the file system
	// lets it be written. It works on a read-only file system. Files it
	// writes elsewhere (plan -o FILE, an export) are its output.
	reads
)

// declaresAccess is a command that says what it does to the repository.
type declaresAccess interface{ access() access }

// accessOf is the access cmd declares: cmd is the parsed command (a
// pointer to its struct, or the struct). One that declares nothing writes.
func accessOf(cmd any) access {
	if d, ok := cmd.(declaresAccess); ok {
		return d.access()
	}
	if v := reflect.ValueOf(cmd); v.IsValid() && v.Kind() != reflect.Pointer {
		p := reflect.New(v.Type())
		p.Elem().Set(v)
		if d, ok := p.Interface().(declaresAccess); ok {
			return d.access()
		}
	}
	return writes
}

// The commands that only read.
func (*ListCmd) access() access             { return reads }
func (*ShowCmd) access() access             { return reads }
func (*PlanCmd) access() access             { return reads }
func (*JournalExportCmd) access() access    { return reads }
func (*JournalVerifyCmd) access() access    { return reads }
func (*JournalHeadCmd) access() access      { return reads }
func (*JournalReportCmd) access() access    { return reads }
func (*JournalSignCmd) access() access      { return reads }
func (*ResourceIdentityCmd) access() access { return reads }
func (*ResourceListCmd) access() access     { return reads }
func (*RecoveredListCmd) access() access    { return reads }
func (*ArchiveVerifyCmd) access() access    { return reads }
func (*ArchiveListCmd) access() access      { return reads }
func (*ArchiveRestoreCmd) access() access   { return reads } // it writes only its new target directory
func (*MigrateDiscoverCmd) access() access  { return reads }
func (*MigrateStatusCmd) access() access    { return reads }
func (*CompleteCmd) access() access         { return reads }
func (*ManCmd) access() access              { return reads }
func (*PathCmd) access() access             { return reads }
func (*SwitchCmd) access() access           { return reads }
func (*ShellInitCmd) access() access        { return reads }
func (*CompleteWordsCmd) access() access    { return reads }

// The commands that read or write by their flags.
func (c *DoctorCmd) access() access {
	if c.Salvage {
		return writes
	}
	return reads
}

func (c *SweepCmd) access() access {
	if c.DryRun || c.InstallTimer || c.UninstallTimer {
		return reads // the timer's files are the user's, not the repository's
	}
	return writes
}

func (c *ResourceGCCmd) access() access {
	if c.DryRun {
		return reads
	}
	return writes
}

func (c *IntegrateClaudeCmd) access() access {
	if c.Check {
		return reads
	}
	return writes
}

func (c *IntegrateCodexCmd) access() access {
	if c.Check && !c.Remove {
		return reads
	}
	return writes
}

func (c *SkillCmd) access() access {
	if c.Out == "" || c.Check {
		return reads
	}
	return writes
}

// The commands that write.
func (*InitCmd) access() access               { return writes }
func (*NewCmd) access() access                { return writes }
func (*AdoptCmd) access() access              { return writes }
func (*FinishCmd) access() access             { return writes }
func (*RemoveCmd) access() access             { return writes }
func (*LandCmd) access() access               { return writes }
func (*ReopenCmd) access() access             { return writes }
func (*AbandonCmd) access() access            { return writes }
func (*ApplyCmd) access() access              { return writes }
func (*ResumeCmd) access() access             { return writes }
func (*ResourceEnsureCmd) access() access     { return writes }
func (*TrustCmd) access() access              { return writes }
func (*RecoveredPruneCmd) access() access     { return writes }
func (*ArchiveCreateCmd) access() access      { return writes }
func (*ArchivePruneCmd) access() access       { return writes } // it resumes first, with or without --apply
func (*MigratePlanCmd) access() access        { return writes } // it journals what it audited
func (*MigrateDisposeCmd) access() access     { return writes }
func (*MigrateApplyCmd) access() access       { return writes }
func (*RelocateCmd) access() access           { return writes }
func (*TeardownCmd) access() access           { return writes }
func (*HookSessionStartCmd) access() access   { return writes }
func (*HookHeartbeatCmd) access() access      { return writes }
func (*HookSessionEndCmd) access() access     { return writes }
func (*HookWorktreeCreateCmd) access() access { return writes }
func (*HookWorktreeRemoveCmd) access() access { return writes }

// selectedAccess is the access of the command kong parsed.
func selectedAccess(k *kong.Context) access {
	n := k.Selected()
	if n == nil || !n.Target.IsValid() {
		return writes
	}
	if n.Target.CanAddr() {
		return accessOf(n.Target.Addr().Interface())
	}
	return accessOf(n.Target.Interface())
}
