package lazy

import "sync"

// Value is what Make returns, made by the first Get. Declare one as a
// package variable with Make set ("var v = lazy.Value[T]{Make: f}"): the
// compiler lays it out as data, where sync.OnceValue would be a call at
// package initialisation.
type Value[T any] struct {
	Make func() T
	once sync.Once
	v    T
}

// Get returns the value, making it on the first call; concurrent first
// calls wait for the one that makes it.
func (l *Value[T]) Get() T {
	l.once.Do(l.make)
	return l.v
}

func (l *Value[T]) make() { l.v = l.Make() }
