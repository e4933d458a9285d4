package main

import "fmt"

func answer() int {
	// TODO: compute the real answer
	return 1
}

func main() {
	fmt.Println(answer())
}
