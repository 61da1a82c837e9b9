package emit

import (
	"errors"
	"sync"
)

// ErrQueueClosed is what Put returns once Close was called.
var ErrQueueClosed = errors.New("queue is closed")

// Queue is the one bounded queue in lcwrap: producers that must never
// wait on a slow consumer put items, and one goroutine of its own hands
// whatever has gathered to drain in one batch, in the order put. It holds
// at most limit, as counted by size; past it, Put waits for room, or
// with drop counts the item as dropped and returns. A drain that fails
// stops the queue: what is queued is given up and every later Put returns
// that error. The journal sink, the agent's output tap and the agents'
// telemetry receivers use it.
type Queue[T any] struct {
	limit int
	size  func(T) int
	drop  bool
	drain func([]T) error

	mu      sync.Mutex
	cond    *sync.Cond
	items   []T
	held    int // the size of items
	closed  bool
	err     error // the drain that stopped the queue
	dropped int64
	done    chan struct{}
}

// NewQueue starts the queue's goroutine. size nil counts each item as 1.
func NewQueue[T any](limit int, size func(T) int, drop bool, drain func([]T) error) *Queue[T] {
	if size == nil {
		size = func(T) int { return 1 }
	}
	q := &Queue[T]{limit: limit, size: size, drop: drop, drain: drain, done: make(chan struct{})}
	q.cond = sync.NewCond(&q.mu)
	go q.run()
	return q
}

// Put queues v. Outcomes: nil (queued, or dropped and counted when the
// queue is full and drops); the error of the drain that stopped the
// queue; ErrQueueClosed after Close.
func (q *Queue[T]) Put(v T) error {
	n := q.size(v)
	q.mu.Lock()
	defer q.mu.Unlock()
	for !q.drop && q.full(n) && q.err == nil && !q.closed {
		q.cond.Wait()
	}
	switch {
	case q.err != nil:
		return q.err
	case q.closed:
		return ErrQueueClosed
	case q.full(n):
		q.dropped += int64(n)
		return nil
	}
	q.items = append(q.items, v)
	q.held += n
	q.cond.Broadcast()
	return nil
}

// full says whether n more would pass the limit (one item alone always
// fits, so that an item larger than the limit cannot wait for ever).
func (q *Queue[T]) full(n int) bool { return len(q.items) > 0 && q.held+n > q.limit }

func (q *Queue[T]) run() {
	defer close(q.done)
	q.mu.Lock()
	defer q.mu.Unlock()
	for {
		for len(q.items) == 0 && !q.closed {
			q.cond.Wait()
		}
		if len(q.items) == 0 || q.err != nil {
			return
		}
		batch := q.items
		q.items, q.held = nil, 0
		q.cond.Broadcast() // room for waiting Puts
		q.mu.Unlock()
		err := q.drain(batch)
		q.mu.Lock()
		if err != nil {
			q.err = err
			q.items, q.held = nil, 0
		}
		q.cond.Broadcast()
	}
}

// Dropped is what Put has dropped so far (in size units).
func (q *Queue[T]) Dropped() int64 {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.dropped
}

// Close drains what is queued and stops. It returns the error of the
// drain that stopped the queue, if one did, and what Put dropped (in
// size units).
func (q *Queue[T]) Close() (dropped int64, err error) {
	q.mu.Lock()
	q.closed = true
	q.cond.Broadcast()
	q.mu.Unlock()
	<-q.done
	return q.dropped, q.err
}
