"""Workers: processes that claim jobs from the store and run the engine on them."""
