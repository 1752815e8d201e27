//! Three controller peers: followers answer not-leader but name the leader, a killed leader
//! peer is replaced and finishes the election, a minority stopped keeps electing, a majority
//! stopped refuses writes with a clear error, a restarted peer catches up.
