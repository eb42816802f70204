// Package jsonscan holds the byte scanning that the router's JSON check
// (route's validJSON) and the contracts' decoder (contract's decode)
// share. It knows nothing else; every function is pure and safe for
// concurrent use.
package jsonscan
