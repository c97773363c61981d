"""What several test modules share: tables and sweeps to report on, saved benchmark runs,
the headless browser, and the environment of a pytest run in a subprocess. Test modules
import these from here, never from each other."""
