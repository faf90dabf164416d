//! Standings, head-to-head tables and leaderboards.
