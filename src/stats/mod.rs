//! Statistics: Elo, pentanomial counts, SPRT and joint ratings.
