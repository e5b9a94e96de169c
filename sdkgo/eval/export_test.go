package eval

// RaceEnabled lets the black-box tests know that this is a -race build, in which hashing
// allocates (murmur_race.go) and allocation counts are not meaningful.
const RaceEnabled = raceEnabled
