package vectorsync

import (
	"context"
	"fmt"
	"slices"
)

// IDLister is an index that can enumerate what it holds, as the embedded
// indexes can; Reconcile needs it to compute differences.
type IDLister interface {
	IDs(namespace string) []string
}

// Progress reports how far a reconciliation or rebuild got in one namespace.
type Progress struct {
	Namespace string
	Done      int // documents indexed so far
	Total     int // documents to index
	Removed   int // vectors removed because their document is gone
}

// pageSize is how many ids are listed, and documents embedded, at a time.
const pageSize = 256

// Reconcile makes the index hold exactly the store's documents in every
// source namespace. With an index that is an [IDLister] only the
// differences are written: missing documents are embedded and added,
// vectors of vanished documents removed. Otherwise (rebuild true, or an
// index that cannot list, such as Pinecone) every document is embedded and
// upserted again. progress, when not nil, is called after each batch.
//
// Reconcile reads the store directly and does not touch the outbox, so it
// may run beside [Syncer.Run]; both converge on the store's state.
func (s *Syncer) Reconcile(ctx context.Context, rebuild bool, progress func(Progress)) error {
	lister, canList := s.cfg.Index.(IDLister)
	for _, src := range s.cfg.Sources {
		stored, err := s.storedIDs(ctx, src.Namespace)
		if err != nil {
			return err
		}
		todo := stored
		p := Progress{Namespace: src.Namespace}
		if canList && !rebuild {
			indexed := lister.IDs(src.Namespace)
			slices.Sort(indexed)
			var extra []string
			todo, extra = diff(stored, indexed)
			if len(extra) > 0 {
				dctx, cancel := context.WithTimeout(ctx, s.cfg.CallTimeout)
				err := s.cfg.Index.Delete(dctx, src.Namespace, extra)
				cancel()
				if err != nil {
					return fmt.Errorf("reconcile %s: remove %d vectors: %w", src.Namespace, len(extra), err)
				}
				p.Removed = len(extra)
			}
		}
		p.Total = len(todo)
		for chunk := range slices.Chunk(todo, pageSize) {
			docs := make([]*Document, 0, len(chunk))
			for _, id := range chunk {
				d, err := src.Load(ctx, id)
				if err != nil {
					continue // deleted since it was listed
				}
				docs = append(docs, d)
			}
			if len(docs) > 0 {
				if err := s.upsert(ctx, src.Namespace, docs); err != nil {
					return fmt.Errorf("reconcile: %w", err)
				}
			}
			p.Done += len(chunk)
			if progress != nil {
				progress(p)
			}
		}
		if progress != nil && p.Total == 0 {
			progress(p)
		}
	}
	return nil
}

// storedIDs lists every document id of a namespace, in ascending order.
func (s *Syncer) storedIDs(ctx context.Context, ns string) ([]string, error) {
	var ids []string
	after := ""
	for {
		page, err := s.cfg.Outbox.ListDocumentIDs(ctx, ns, after, 4*pageSize)
		if err != nil {
			return nil, fmt.Errorf("reconcile %s: %w", ns, err)
		}
		if len(page) == 0 {
			return ids, nil
		}
		ids = append(ids, page...)
		after = page[len(page)-1]
	}
}

// diff returns the ids only in a and only in b; both are sorted.
func diff(a, b []string) (onlyA, onlyB []string) {
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case j == len(b) || (i < len(a) && a[i] < b[j]):
			onlyA = append(onlyA, a[i])
			i++
		case i == len(a) || b[j] < a[i]:
			onlyB = append(onlyB, b[j])
			j++
		default:
			i++
			j++
		}
	}
	return onlyA, onlyB
}
