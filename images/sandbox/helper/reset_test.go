package main

import "testing"

func TestResetStateRespawnsOnlyAfterARequest(t *testing.T) {
	var r resetState
	if r.childExited() {
		t.Fatal("a child exit without a reset request must end the container")
	}
	r.request()
	r.request()
	if !r.childExited() {
		t.Fatal("a child exit after a reset request must start a new child")
	}
	if r.childExited() {
		t.Fatal("two requests before one exit are one reset; the next exit ends the container")
	}
}

func TestVersionAnnouncesReset(t *testing.T) {
	if version != "2" {
		t.Fatalf("version = %q; the controller re-attaches with --reset only to version 2", version)
	}
}
