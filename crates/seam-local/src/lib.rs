//! The agent's seven local tools, the Critic and the return queue.
