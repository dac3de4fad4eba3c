package observe

import (
	"bytes"
	"fmt"
	"github.com/custody-sh/custody/observe/hostio"
	"strconv"
)

// LsofProcess is one process set of `lsof -F` output: the process and
// the files it holds.
type LsofProcess struct {
	PID     int
	PPID    int
	Command string
	Files   []LsofFile
}

// LsofFile is one file set of `lsof -F` output.
type LsofFile struct {
	// FD is lsof's file descriptor field: "cwd", "rtd", "txt", "mem",
	// a descriptor number, or another of lsof's names.
	FD string
	// Type is lsof's file type ("DIR", "REG", "VREG", ...), possibly empty.
	Type string
	// Name is lsof's file name: a path, or a comment or address for what
	// has none.
	Name string
}

// LsofFields is the -F argument ParseLsof reads: pid, parent pid, command,
// descriptor, type and name, NUL-terminated.
const LsofFields = "-FpRcftn0"

// ParseLsof parses the output of `lsof -FpRcftn0`: sets of fields, each
// field an identifier character, its data and a NUL, each set ended by a
// newline. A process set starts with p (pid) and may hold R (parent pid)
// and c (command); a file set starts with f (descriptor) and may hold t
// (type) and n (name), and belongs to the process set before it. Anything
// else (another field, a repeated field, a file before any process, a
// process listed twice with another parent or command, output cut short)
// is ErrMalformed: a partial listing is never taken for a whole one. A
// process listed again with the same parent and command (Linux's lsof
// lists each thread so) is one process holding the files of every listing.
func ParseLsof(b []byte) ([]LsofProcess, error) {
	var out []LsofProcess
	at := map[int]int{} // pid → index in out
	cur := -1           // the process set file sets belong to
	for len(b) > 0 {
		nl := bytes.IndexByte(b, '\n')
		if nl < 0 {
			return nil, hostio.MalformedAt("lsof", "output ends inside a set: %q", hostio.Truncate(b))
		}
		set := b[:nl]
		b = b[nl+1:]
		fields, err := lsofFields(set)
		if err != nil {
			return nil, err
		}
		switch fields[0].id {
		case 'p':
			p, err := lsofProcessSet(fields)
			if err != nil {
				return nil, err
			}
			if i, ok := at[p.PID]; ok {
				// Linux's lsof lists each task (thread) of a process
				// as a process set of its own: the same process.
				if out[i].PPID != p.PPID || out[i].Command != p.Command {
					return nil, hostio.MalformedAt("lsof", "process %d is listed twice, as %q (parent %d) and %q (parent %d)",
						p.PID, out[i].Command, out[i].PPID, p.Command, p.PPID)
				}
				cur = i
				continue
			}
			at[p.PID] = len(out)
			cur = len(out)
			out = append(out, p)
		case 'f':
			if cur < 0 {
				return nil, hostio.MalformedAt("lsof", "a file set before any process set: %q", hostio.Truncate(set))
			}
			f, err := lsofFileSet(fields)
			if err != nil {
				return nil, err
			}
			out[cur].Files = append(out[cur].Files, f)
		default:
			return nil, hostio.MalformedAt("lsof", "a set starts with field %q, want p or f", fields[0].id)
		}
	}
	return out, nil
}

// lsofField is one field of a set: its identifier and data.
type lsofField struct {
	id   byte
	data string
}

// lsofFields splits one set (without its newline) into NUL-terminated
// fields; each needs an identifier and a terminator, and no field may
// appear twice in a set.
func lsofFields(set []byte) ([]lsofField, error) {
	if len(set) == 0 {
		return nil, hostio.MalformedAt("lsof", "an empty set")
	}
	var out []lsofField
	var have [256]bool
	for len(set) > 0 {
		end := bytes.IndexByte(set, 0)
		if end < 0 {
			return nil, hostio.MalformedAt("lsof", "a field without its NUL terminator: %q", hostio.Truncate(set))
		}
		if end == 0 {
			return nil, hostio.MalformedAt("lsof", "a field without an identifier")
		}
		f := lsofField{id: set[0], data: string(set[1:end])}
		if have[f.id] {
			return nil, hostio.MalformedAt("lsof", "field %q twice in one set", f.id)
		}
		have[f.id] = true
		out = append(out, f)
		set = set[end+1:]
	}
	return out, nil
}

// lsofProcessSet reads a set whose first field is p.
func lsofProcessSet(fields []lsofField) (LsofProcess, error) {
	pid, err := lsofPID(fields[0].data)
	if err != nil || pid <= 0 {
		return LsofProcess{}, hostio.MalformedAt("lsof", "bad pid %q", fields[0].data)
	}
	p := LsofProcess{PID: pid}
	for _, f := range fields[1:] {
		switch f.id {
		case 'R':
			if p.PPID, err = lsofPID(f.data); err != nil {
				return LsofProcess{}, hostio.MalformedAt("lsof", "bad parent pid %q of process %d", f.data, pid)
			}
		case 'c':
			p.Command = f.data
		default:
			return LsofProcess{}, hostio.MalformedAt("lsof", "unexpected field %q in the set of process %d", f.id, pid)
		}
	}
	return p, nil
}

// lsofFileSet reads a set whose first field is f.
func lsofFileSet(fields []lsofField) (LsofFile, error) {
	f := LsofFile{FD: fields[0].data}
	if f.FD == "" {
		return LsofFile{}, hostio.MalformedAt("lsof", "an empty file descriptor field")
	}
	for _, x := range fields[1:] {
		switch x.id {
		case 't':
			f.Type = x.data
		case 'n':
			f.Name = x.data
		default:
			return LsofFile{}, hostio.MalformedAt("lsof", "unexpected field %q in the file set of descriptor %q", x.id, f.FD)
		}
	}
	return f, nil
}

// lsofPID parses a decimal process id: digits only, no sign, at most ten.
func lsofPID(s string) (int, error) {
	if s == "" || len(s) > 10 {
		return 0, fmt.Errorf("bad pid %q", s)
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, fmt.Errorf("bad pid %q", s)
		}
	}
	n, err := strconv.Atoi(s)
	if err != nil || n > 1<<31-1 {
		return 0, fmt.Errorf("bad pid %q", s)
	}
	return n, nil
}
