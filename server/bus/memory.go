package bus

import (
	"context"
	"errors"
	"sync"
)

// Memory is the in-process bus of single-instance mode (REDIS_URL empty).
// Publish delivers synchronously to the current subscribers, in order.
type Memory struct {
	mu     sync.RWMutex
	subs   map[int]func(Event)
	next   int
	closed bool
}

var _ Bus = (*Memory)(nil)

// NewMemory returns an empty in-process bus.
func NewMemory() *Memory { return &Memory{subs: map[int]func(Event){}} }

// Publish delivers events to every subscriber before it returns.
func (m *Memory) Publish(_ context.Context, events ...Event) error {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if m.closed {
		return errors.New("bus closed")
	}
	for _, e := range events {
		for _, fn := range m.subs {
			fn(e)
		}
	}
	return nil
}

// Subscribe registers fn until cancel is called.
func (m *Memory) Subscribe(fn func(Event)) (cancel func()) {
	m.mu.Lock()
	defer m.mu.Unlock()
	id := m.next
	m.next++
	m.subs[id] = fn
	return func() {
		m.mu.Lock()
		defer m.mu.Unlock()
		delete(m.subs, id)
	}
}

// Close stops delivery; later publishes fail.
func (m *Memory) Close() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.closed = true
	m.subs = map[int]func(Event){}
	return nil
}
