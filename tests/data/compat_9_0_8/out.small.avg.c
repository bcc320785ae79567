num_q                 	all	8
num_ret               	all	114
num_rel               	all	74
num_rel_ret           	all	25
gm_map                	all	0.0041
bpref                 	all	0.2386
infAP                 	all	0.0982
gm_bpref              	all	0.0071
