// Package worker runs Switchyard's background loops: the scheduled-change
// runner and the notification delivery loop. Each is a small loop around
// one service operation that is safe to run on several instances at once (the
// rows it works on are claimed with FOR UPDATE SKIP LOCKED).
package worker
