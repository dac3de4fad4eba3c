package store

import (
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	bolt "go.etcd.io/bbolt"

	json "github.com/custody-sh/custody/machine/bytejson"
)

// Damage is what a page-by-page scan of a state file found it could not
// read, without bbolt (which would crash or hang on it).
type Damage struct {
	// Lost names each damaged subtree: the bucket, the page and why.
	Lost []string `json:"lost"`
	// Buckets counts the entries still readable in each top-level bucket.
	Buckets map[string]int `json:"buckets"`
}

// rawStore is a state file read page by page.
type rawStore struct {
	order   []string
	buckets map[string][][2][]byte
	// seqs is each bucket's sequence (its last NextSequence), read from
	// the bucket's header in its parent.
	seqs map[string]uint64
	lost []string
}

// scanRaw reads every top-level bucket of the state file at path page by
// page, going on past every damaged page (see walker), and never maps or
// locks the file. It fails only when no meta page is valid, which leaves
// nothing to read.
func scanRaw(path string) (*rawStore, error) {
	fi, err := os.Lstat(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w: %w", path, ErrUnreadable, err)
	}
	if err := notRegular(path, fi.Mode()); err != nil {
		return nil, err
	}
	f, err := openRegular(path, os.O_RDONLY)
	if err != nil {
		return nil, fmt.Errorf("%s: %w: %w", path, ErrUnreadable, err)
	}
	defer f.Close()
	if fi, err = f.Stat(); err != nil {
		return nil, fmt.Errorf("%s: %w: %w", path, ErrUnreadable, err)
	}
	size := uint64(fi.Size())
	m, ok := bestMeta(f, size)
	if !ok {
		return nil, fmt.Errorf("%s: %w (no valid bbolt meta page: nothing can be read)", path, ErrCorrupt)
	}
	raw := &rawStore{buckets: map[string][][2][]byte{}, seqs: map[string]uint64{}}
	w := &walker{f: f, size: size, ps: m.pageSize, hwm: m.hwm, seen: map[uint64]bool{}, tolerant: true}
	w.emit = func(bucket []string, k, v []byte) {
		if len(bucket) != 1 {
			if len(bucket) > 1 && k == nil {
				raw.lost = append(raw.lost, fmt.Sprintf("bucket %s: nested buckets are not custody's and are not kept", strings.Join(bucket, "/")))
			}
			return
		}
		name := bucket[0]
		if _, ok := raw.buckets[name]; !ok {
			raw.order = append(raw.order, name)
			raw.buckets[name] = nil
		}
		if k == nil {
			raw.seqs[name] = binary.LittleEndian.Uint64(v[8:])
		} else {
			raw.buckets[name] = append(raw.buckets[name], [2][]byte{append([]byte(nil), k...), append([]byte(nil), v...)})
		}
	}
	if why := w.child(w.tree(m.root, 0, nil), nil); why != "" {
		raw.lost = append(raw.lost, why)
	}
	raw.lost = append(raw.lost, w.lost...)
	return raw, nil
}

// Scan reads the state file at path page by page, without bbolt, and
// reports what it cannot read. doctor runs it when the file is too damaged
// for bbolt to open safely, so it can still name every damaged part.
func Scan(path string) (Damage, error) {
	raw, err := scanRaw(path)
	if err != nil {
		return Damage{}, err
	}
	d := Damage{Lost: raw.lost, Buckets: map[string]int{}}
	for _, name := range raw.order {
		d.Buckets[name] = len(raw.buckets[name])
	}
	return d, nil
}

// SalvageReport says what Salvage kept and what was lost.
type SalvageReport struct {
	// Path is the state file, now the salvaged store.
	Path string `json:"path"`
	// Damaged is where the damaged file was kept, byte for byte.
	Damaged string `json:"damaged"`
	// Kept counts the entries written to the new store, by bucket.
	Kept map[string]int `json:"kept"`
	// Lost names every part of the old file that could not be read.
	Lost []string `json:"lost"`
	// LostJournal lists the journal sequence numbers that were lost.
	LostJournal []uint64 `json:"lost_journal"`
	// NewRepositoryID is set when the repository id was lost and a new one
	// had to be made (plans made before are then refused as another
	// repository's).
	NewRepositoryID string `json:"new_repository_id,omitempty"`
}

// Salvage writes a new store from everything that can still be read in the
// damaged state file at path — every record of every kind, intent index
// entry, lease, plan, meta value and journal entry — and swaps it in: the
// new file is written and fsynced beside the old
// (state.db.salvage-<time>), the old file is renamed to
// state.db.damaged-<time> (kept byte for byte, never deleted), and the new
// file is renamed to state.db. Journal entries are kept verbatim under
// their sequence numbers; Salvage then appends a "salvage" event, chained
// to the last entry kept, that names the sequence numbers and parts lost
// (docs/decisions/0016-salvage.md). It holds the old file's lock
// throughout, so no other custody writes to it meanwhile.
func Salvage(path string, now time.Time, actor string) (SalvageReport, error) {
	stamp := now.UTC().Format("20060102T150405Z")
	rep := SalvageReport{Path: path, Damaged: path + ".damaged-" + stamp, Kept: map[string]int{}}
	lock, err := openRegular(path, os.O_RDONLY)
	if err != nil {
		if isCorrupt(err) {
			return rep, err
		}
		return rep, fmt.Errorf("%s: %w: %w", path, ErrUnreadable, err)
	}
	defer lock.Close()
	if err := lockNow(lock); err != nil {
		return rep, fmt.Errorf("%s: %w (another process holds it; salvage needs it alone)", path, ErrLockTimeout)
	}
	raw, err := scanRaw(path)
	if err != nil {
		return rep, err
	}
	rep.Lost = raw.lost
	tmp := path + ".salvage-" + stamp
	for _, p := range []string{tmp, rep.Damaged} {
		if _, err := os.Lstat(p); !errors.Is(err, fs.ErrNotExist) {
			return rep, fmt.Errorf("%s is in the way (an earlier salvage?); nothing was changed", p)
		}
	}
	if err := writeSalvaged(tmp, raw, &rep, now, actor); err != nil {
		os.Remove(tmp)
		return rep, fmt.Errorf("salvage %s: %w; nothing was changed", path, err)
	}
	if err := os.Rename(path, rep.Damaged); err != nil {
		os.Remove(tmp)
		return rep, fmt.Errorf("salvage %s: keep the damaged file: %w; nothing was changed", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return rep, fmt.Errorf("salvage %s: the damaged file is at %s and the salvaged store at %s, but it could not be moved in place: %w", path, rep.Damaged, tmp, err)
	}
	if d, err := os.Open(filepath.Dir(path)); err == nil {
		_ = d.Sync()
		d.Close()
	}
	return rep, nil
}

// writeSalvaged writes the new store at tmp from raw.
func writeSalvaged(tmp string, raw *rawStore, rep *SalvageReport, now time.Time, actor string) error {
	db, err := bolt.Open(tmp, 0o600, &bolt.Options{Timeout: time.Second, OpenFile: func(p string, flag int, mode os.FileMode) (*os.File, error) {
		return os.OpenFile(p, flag|os.O_EXCL|oNoFollow, mode)
	}})
	if err != nil {
		return err
	}
	err = db.Update(func(tx *bolt.Tx) error {
		names := append([]string{}, raw.order...)
		for _, b := range DefaultSchema().Buckets {
			if _, ok := raw.buckets[b.Name]; !ok {
				names = append(names, b.Name)
				rep.Lost = append(rep.Lost, "bucket "+b.Name+": missing; made empty")
			}
		}
		for _, name := range names {
			b, err := tx.CreateBucketIfNotExists([]byte(name))
			if err != nil {
				return err
			}
			for _, kv := range raw.buckets[name] {
				if name == nameJournal && len(kv[0]) != 8 {
					rep.Lost = append(rep.Lost, fmt.Sprintf("journal key %x: not a sequence number; dropped", kv[0]))
					continue
				}
				if err := b.Put(kv[0], kv[1]); err != nil {
					return err
				}
				rep.Kept[name]++
			}
		}
		meta := tx.Bucket(bucketMeta)
		if len(meta.Get(keySchema)) == 0 {
			rep.Lost = append(rep.Lost, fmt.Sprintf("meta schema: lost; set to %d", SchemaVersion))
			if err := meta.Put(keySchema, []byte(fmt.Sprint(SchemaVersion))); err != nil {
				return err
			}
		}
		if len(meta.Get(keyRepoID)) == 0 {
			var id [16]byte
			if _, err := rand.Read(id[:]); err != nil {
				return err
			}
			rep.NewRepositoryID = hex.EncodeToString(id[:])
			rep.Lost = append(rep.Lost, "meta repository_id: lost; a new one was made")
			if err := meta.Put(keyRepoID, []byte(rep.NewRepositoryID)); err != nil {
				return err
			}
		}
		j := tx.Bucket(bucketJournal)
		last, lastHash := salvagedChain(j, raw.seqs[nameJournal], rep)
		if err := j.SetSequence(last); err != nil {
			return err
		}
		if err := meta.Put(keyJournalHead, []byte(lastHash)); err != nil {
			return err
		}
		if v, _ := strconv.Atoi(string(meta.Get(keySchema))); v >= contentSchema && len(meta.Get(keyContentFrom)) == 0 {
			// Lost with meta: entries from the salvage event on are
			// committed (the kept ones carry their own rule).
			rep.Lost = append(rep.Lost, fmt.Sprintf("meta content_authenticated_from: lost; set to %d", last+1))
			if err := meta.Put(keyContentFrom, []byte(strconv.FormatUint(last+1, 10))); err != nil {
				return err
			}
		}
		// The indexes are derived: made again from what was kept, never
		// copied (they may name what was lost).
		if err := rebuildIndexes(tx, DefaultSchema().kinds()); err != nil {
			return err
		}
		detail, err := json.Marshal(map[string]any{"damaged": rep.Damaged, "lost_journal": rep.LostJournal, "lost": rep.Lost, "kept": rep.Kept})
		if err != nil {
			return err
		}
		return appendJournal(tx, Entry{At: now, Event: "salvage", Detail: detail, Actor: actor})
	})
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	return err
}

// salvagedChain walks the journal kept, notes the sequence numbers lost
// (gaps, those after the last entry kept up to the bucket's sequence seq,
// and entries that do not parse or break the chain, which stay
// stored verbatim but are reported), and returns the last sequence number
// and the hash of the last entry the salvage event must chain to.
func salvagedChain(j *bolt.Bucket, seq uint64, rep *SalvageReport) (uint64, string) {
	var last uint64
	var lastHash string
	var keys []uint64
	_ = j.ForEach(func(k, _ []byte) error { keys = append(keys, binary.BigEndian.Uint64(k)); return nil })
	sort.Slice(keys, func(a, b int) bool { return keys[a] < keys[b] })
	prev := ""
	for _, seq := range keys {
		for s := last + 1; s < seq; s++ {
			rep.LostJournal = append(rep.LostJournal, s)
		}
		v := j.Get(seqKey(seq))
		var e Entry
		err := json.Unmarshal(v, &e)
		if err != nil || e.Seq != seq || !entryHashOK(v, e.Prev, e.Hash) {
			rep.Lost = append(rep.Lost, fmt.Sprintf("journal entry %d: does not verify; kept verbatim", seq))
		} else if e.Prev != prev {
			rep.Lost = append(rep.Lost, fmt.Sprintf("journal entry %d: does not chain to the entry before it (entries were lost)", seq))
		}
		prev, last = e.Hash, seq
		if e.Hash != "" {
			lastHash = e.Hash
		}
	}
	for s := last + 1; s <= seq; s++ {
		rep.LostJournal = append(rep.LostJournal, s)
	}
	return max(last, seq), lastHash
}
